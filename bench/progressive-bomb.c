// Writes a progressive JPEG of a gentle vertical gradient with more scans than cjpeg's
// -scans can express (it stops at 100): DC in two scans, then each AC coefficient of each
// component alone, first at bit AL[c] and then refined one bit per scan. libjpeg accepts
// the progression, and a decoder must read every scan over the whole image.
//
//   cc -O2 -o progressive-bomb bench/progressive-bomb.c -ljpeg
//   progressive-bomb OUT WIDTH HEIGHT AL0 [AL1 AL2]   # one AL: grey; three: YCbCr 4:2:0
//
// Prints the number of scans written.
#include <stdio.h>
#include <stdlib.h>

#include <jpeglib.h>

int main(int argc, char **argv) {
    if (argc != 5 && argc != 7) {
        fprintf(stderr, "usage: %s OUT WIDTH HEIGHT AL0 [AL1 AL2]\n", argv[0]);
        return 2;
    }
    int width = atoi(argv[2]), height = atoi(argv[3]), components = argc - 4, first_al[3];
    int count = 2;
    for (int c = 0; c < components; c++) {
        first_al[c] = atoi(argv[4 + c]);
        count += 63 * (first_al[c] + 1);
    }
    jpeg_scan_info *scans = calloc((size_t)count, sizeof *scans);
    int n = 0;
    for (int refine = 0; refine < 2; refine++, n++) {
        scans[n].comps_in_scan = components;
        for (int c = 0; c < components; c++) scans[n].component_index[c] = c;
        scans[n].Ah = refine;
        scans[n].Al = 1 - refine;
    }
    for (int c = 0; c < components; c++) {
        for (int k = 1; k < 64; k++) {
            for (int al = first_al[c]; al >= 0; al--, n++) {
                scans[n].comps_in_scan = 1;
                scans[n].component_index[0] = c;
                scans[n].Ss = scans[n].Se = k;
                scans[n].Ah = al == first_al[c] ? 0 : al + 1;
                scans[n].Al = al;
            }
        }
    }
    FILE *out = fopen(argv[1], "wb");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr error;
    cinfo.err = jpeg_std_error(&error);
    jpeg_create_compress(&cinfo);
    jpeg_stdio_dest(&cinfo, out);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = components;
    cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, 90, TRUE);
    cinfo.scan_info = scans;
    cinfo.num_scans = count;
    jpeg_start_compress(&cinfo, TRUE);
    JSAMPLE *row = malloc((size_t)width * (size_t)components);
    static const JSAMPLE tint[3] = {0, 128, 192};
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPLE level = (JSAMPLE)(64 + (int)cinfo.next_scanline * 128 / height);
        for (int x = 0; x < width; x++)
            for (int c = 0; c < components; c++) row[x * components + c] = c == 0 ? level : tint[c];
        JSAMPROW rows[1] = {row};
        jpeg_write_scanlines(&cinfo, rows, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    fclose(out);
    printf("%d\n", count);
    return 0;
}
