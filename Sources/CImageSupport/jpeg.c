// libjpeg(-turbo) shims. Every entry point owns its setjmp: libjpeg's error_exit is
// replaced by one that formats the message and longjmps back to the entry point, which
// destroys the codec, frees what it allocated and returns a status. Warnings that mean
// the entropy data is corrupt or cut off are escalated to errors; other messages are
// dropped (never printed).

#include "CImageSupport.h"
#include "shared.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

typedef struct {
    struct jpeg_error_mgr base;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    cis_status status;
    int64_t deadline_ns;
    char text[JMSG_LENGTH_MAX];
} jpeg_failure;

__attribute__((noreturn))
static void jpeg_fail(j_common_ptr cinfo) {
    jpeg_failure *failure = (jpeg_failure *)cinfo->err;
    failure->status = failure->base.msg_code == JERR_OUT_OF_MEMORY ? CIS_NO_MEMORY : CIS_CORRUPT;
    failure->base.format_message(cinfo, failure->text);
    longjmp(failure->jump, 1);
}

// Bytes a scan left unread before the next marker that are still padding, as some
// encoders leave before EOI; more mean the scan's data was damaged and decoded as
// something else (a flipped bit ends the scan early).
#define CIS_MAX_PADDING_BYTES 16

// Warnings that mean the pixels would be partly invented (grey fill, resync garbage,
// damaged scan data).
static int is_corrupt_data_warning(const struct jpeg_error_mgr *err) {
    switch (err->msg_code) {
    case JWRN_EXTRANEOUS_DATA:
        return err->msg_parm.i[0] > CIS_MAX_PADDING_BYTES;
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_NOT_SEQUENTIAL:
        return 1;
    default:
        return 0;
    }
}

static void jpeg_emit(j_common_ptr cinfo, int level) {
    if (level < 0) {
        if (is_corrupt_data_warning(cinfo->err)) jpeg_fail(cinfo);
        cinfo->err->num_warnings++;
    }
}

static void jpeg_output_nothing(j_common_ptr cinfo) { (void)cinfo; }

// Called by libjpeg once per row group, and per row group of every scan while a
// progressive file is read in: stops a decode that has run past its deadline.
static void jpeg_check_progress(j_common_ptr cinfo) {
    jpeg_failure *failure = (jpeg_failure *)cinfo->err;
    if (cis_deadline_passed(failure->deadline_ns)) {
        failure->status = CIS_TOO_SLOW;
        snprintf(failure->text, sizeof failure->text, "%s", CIS_TOO_SLOW_TEXT);
        longjmp(failure->jump, 1);
    }
}

static struct jpeg_error_mgr *jpeg_failure_init(jpeg_failure *failure, int64_t deadline_ns) {
    memset(failure, 0, sizeof *failure);
    jpeg_std_error(&failure->base);
    failure->base.error_exit = jpeg_fail;
    failure->base.emit_message = jpeg_emit;
    failure->base.output_message = jpeg_output_nothing;
    failure->progress.progress_monitor = jpeg_check_progress;
    failure->deadline_ns = deadline_ns;
    failure->status = CIS_CORRUPT;
    return &failure->base;
}

// Start-of-scan markers in a JPEG's bytes, without decoding: segments are skipped by
// their lengths, and the entropy-coded data after each SOS up to the next marker (0xFF
// followed by neither 0x00 stuffing nor a restart marker).
enum { MARKER_RST0 = 0xD0, MARKER_RST7 = 0xD7, MARKER_EOI = 0xD9, MARKER_SOS = 0xDA };

static int count_scans(const uint8_t *data, size_t size) {
    int scans = 0;
    size_t i = 2;  // past SOI
    while (i + 1 < size) {
        uint8_t marker = data[i + 1];
        if (data[i] != 0xFF || marker == 0xFF) {  // stray bytes or fill before a marker
            i++;
            continue;
        }
        if (marker == MARKER_EOI) break;
        if (marker == 0x00 || marker == 0x01 || (marker >= MARKER_RST0 && marker <= MARKER_RST7)) {  // no length
            i += 2;
            continue;
        }
        if (i + 3 >= size) break;
        i += 2 + ((size_t)data[i + 2] << 8 | data[i + 3]);
        if (marker != MARKER_SOS) continue;
        scans++;
        while (i + 1 < size &&
               !(data[i] == 0xFF && data[i + 1] != 0x00 && !(data[i + 1] >= MARKER_RST0 && data[i + 1] <= MARKER_RST7)))
            i++;
    }
    return scans;
}

// What decoding a file whose header `cinfo` has read takes at most: a multi-scan file's
// coefficient buffer (every block of every component, padded to whole MCUs, as libjpeg's
// jdcoefct.c allocates it) plus two row groups of full-width samples.
static int64_t decode_bytes(j_decompress_ptr cinfo) {
    int64_t bytes = 2 * (int64_t)cinfo->image_width * cinfo->num_components * cinfo->max_v_samp_factor * DCTSIZE;
    if (!jpeg_has_multiple_scans(cinfo)) return bytes;
    for (int c = 0; c < cinfo->num_components; c++) {
        jpeg_component_info *component = &cinfo->comp_info[c];
        int64_t across = (component->width_in_blocks + component->h_samp_factor - 1) / component->h_samp_factor;
        int64_t down = (component->height_in_blocks + component->v_samp_factor - 1) / component->v_samp_factor;
        bytes += across * component->h_samp_factor * down * component->v_samp_factor * (int64_t)sizeof(JBLOCK);
    }
    return bytes;
}

cis_status cis_jpeg_read_header(const uint8_t *data, size_t size, cis_jpeg_header *header,
                                cis_message *message) {
    if (!data || !header || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    memset(header, 0, sizeof *header);

    struct jpeg_decompress_struct cinfo;
    jpeg_failure failure;
    cinfo.err = jpeg_failure_init(&failure, INT64_MAX);
    if (setjmp(failure.jump)) {
        jpeg_destroy_decompress(&cinfo);
        cis_message_set(message, failure.text);
        return failure.status;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    header->width = (int)cinfo.image_width;
    header->height = (int)cinfo.image_height;
    header->components = cinfo.num_components;
    header->progressive = cinfo.progressive_mode ? 1 : 0;
    header->scans = count_scans(data, size);
    header->decode_bytes = decode_bytes(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return CIS_OK;
}

// Adobe CMYK JPEGs store inverted ink values; plain ones store ink amounts.
static void cmyk_row_to_rgb(const uint8_t *cmyk, uint8_t *rgb, JDIMENSION width, int inverted) {
    for (JDIMENSION x = 0; x < width; x++) {
        unsigned c = cmyk[0], m = cmyk[1], y = cmyk[2], k = cmyk[3];
        if (!inverted) {
            c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k;
        }
        rgb[0] = (uint8_t)((c * k + 127) / 255);
        rgb[1] = (uint8_t)((m * k + 127) / 255);
        rgb[2] = (uint8_t)((y * k + 127) / 255);
        cmyk += 4;
        rgb += 3;
    }
}

struct cis_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    jpeg_failure failure;
    int created;
    int cmyk;
    // One row of output-width CMYK pixels, or a row to decode into and discard.
    uint8_t *scratch;
    cis_status failed;
    char failed_text[JMSG_LENGTH_MAX];
};

// Every entry point below starts with DECODER_TRY: a libjpeg error longjmps back to it,
// which records the error in the decoder, so later calls report it without touching
// libjpeg again.
#define DECODER_TRY(decoder, message)                                     \
    do {                                                                  \
        if ((decoder)->failed != CIS_OK) {                                \
            cis_message_set((message), (decoder)->failed_text);           \
            return (decoder)->failed;                                     \
        }                                                                 \
        if (setjmp((decoder)->failure.jump)) {                            \
            (decoder)->failed = (decoder)->failure.status;                \
            memcpy((decoder)->failed_text, (decoder)->failure.text, JMSG_LENGTH_MAX); \
            cis_message_set((message), (decoder)->failed_text);           \
            return (decoder)->failed;                                     \
        }                                                                 \
    } while (0)

__attribute__((noreturn))
static void decoder_fail(cis_jpeg_decoder *decoder, cis_status status, const char *text) {
    decoder->failure.status = status;
    snprintf(decoder->failure.text, sizeof decoder->failure.text, "%s", text);
    longjmp(decoder->failure.jump, 1);
}

static cis_status decoder_begin(cis_jpeg_decoder *decoder, const uint8_t *data, size_t size,
                                int scale_eighths, int fast, cis_message *message) {
    DECODER_TRY(decoder, message);
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    jpeg_create_decompress(cinfo);
    decoder->created = 1;
    cinfo->progress = &decoder->failure.progress;
    jpeg_mem_src(cinfo, data, (unsigned long)size);
    jpeg_read_header(cinfo, TRUE);

    decoder->cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    cinfo->out_color_space = decoder->cmyk ? JCS_CMYK : JCS_RGB;
    cinfo->scale_num = (unsigned)scale_eighths;
    cinfo->scale_denom = 8;
    cinfo->dct_method = fast ? JDCT_IFAST : JDCT_ISLOW;
    cinfo->do_fancy_upsampling = fast ? FALSE : TRUE;
    jpeg_start_decompress(cinfo);
    decoder->scratch = malloc((size_t)cinfo->output_width * 4);
    if (!decoder->scratch) decoder_fail(decoder, CIS_NO_MEMORY, "no memory for a row");
    return CIS_OK;
}

cis_status cis_jpeg_decoder_start(const uint8_t *data, size_t size, int scale_eighths, int fast,
                                  int64_t deadline_ns, cis_jpeg_decoder **decoder, int *width,
                                  int *height, cis_message *message) {
    if (!data || !decoder || !width || !height || !message || scale_eighths < 1 || scale_eighths > 16)
        return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    *decoder = NULL;
    cis_jpeg_decoder *d = calloc(1, sizeof *d);
    if (!d) {
        cis_message_set(message, "no memory for a JPEG decoder");
        return CIS_NO_MEMORY;
    }
    d->cinfo.err = jpeg_failure_init(&d->failure, deadline_ns);
    cis_status status = decoder_begin(d, data, size, scale_eighths, fast, message);
    if (status != CIS_OK) {
        cis_jpeg_decoder_free(d);
        return status;
    }
    *width = (int)d->cinfo.output_width;
    *height = (int)d->cinfo.output_height;
    *decoder = d;
    return CIS_OK;
}

cis_status cis_jpeg_decoder_read_row(cis_jpeg_decoder *decoder, uint8_t *row, cis_message *message) {
    if (!decoder || !row || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    DECODER_TRY(decoder, message);
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (cinfo->output_scanline >= cinfo->output_height)
        decoder_fail(decoder, CIS_BAD_ARGUMENT, "read past the last row");
    JSAMPROW target = decoder->cmyk ? decoder->scratch : row;
    if (jpeg_read_scanlines(cinfo, &target, 1) != 1)
        decoder_fail(decoder, CIS_CORRUPT, "the JPEG data ended early");
    if (decoder->cmyk) cmyk_row_to_rgb(decoder->scratch, row, cinfo->output_width, cinfo->saw_Adobe_marker);
    return CIS_OK;
}

cis_status cis_jpeg_decoder_finish(cis_jpeg_decoder *decoder, cis_message *message) {
    if (!decoder || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    DECODER_TRY(decoder, message);
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    JSAMPROW discard = decoder->scratch;
    while (cinfo->output_scanline < cinfo->output_height) {
        if (jpeg_read_scanlines(cinfo, &discard, 1) != 1)
            decoder_fail(decoder, CIS_CORRUPT, "the JPEG data ended early");
    }
    jpeg_finish_decompress(cinfo);
    return CIS_OK;
}

void cis_jpeg_decoder_free(cis_jpeg_decoder *decoder) {
    if (!decoder) return;
    if (decoder->created) jpeg_destroy_decompress(&decoder->cinfo);  // cannot fail
    free(decoder->scratch);
    free(decoder);
}

cis_status cis_jpeg_encode(const uint8_t *pixels, int width, int height, int channels,
                           int quality, uint8_t **out, size_t *out_size, cis_message *message) {
    if (!pixels || !out || !out_size || !message || width < 1 || height < 1 ||
        (channels != 1 && channels != 3) || quality < 1 || quality > 100)
        return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    *out = NULL;
    *out_size = 0;

    struct jpeg_compress_struct cinfo;
    jpeg_failure failure;
    // Written by libjpeg through the pointer; always the current allocation.
    unsigned char *buffer = NULL;
    unsigned long buffer_size = 0;
    cinfo.err = jpeg_failure_init(&failure, INT64_MAX);
    if (setjmp(failure.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(buffer);
        cis_message_set(message, failure.text);
        return failure.status;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buffer, &buffer_size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = channels;
    cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    cinfo.optimize_coding = TRUE;
    cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_compress(&cinfo, TRUE);

    size_t row_bytes = (size_t)width * (size_t)channels;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW rows[16];
        JDIMENSION count = cinfo.image_height - cinfo.next_scanline;
        if (count > 16) count = 16;
        for (JDIMENSION i = 0; i < count; i++)
            rows[i] = (JSAMPROW)(pixels + row_bytes * (cinfo.next_scanline + i));
        jpeg_write_scanlines(&cinfo, rows, count);
    }
    jpeg_finish_compress(&cinfo); // the buffer is complete only now
    jpeg_destroy_compress(&cinfo);

    *out = buffer;
    *out_size = buffer_size;
    return CIS_OK;
}
