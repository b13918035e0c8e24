// libpng shims. Decoding uses the row API: every entry point owns its setjmp (libpng's
// error function longjmps back to it), and rows come out one at a time, so a large image
// never needs a whole buffer. Encoding uses the simplified png_image API, which does its
// own setjmp and reports failures in image.message. Nothing here prints or exits.

#include "CImageSupport.h"
#include "shared.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

static cis_status png_image_failure(png_image *image, cis_message *message) {
    cis_message_set(message, image->message[0] ? image->message : "unreadable PNG data");
    png_image_free(image);
    return CIS_CORRUPT;
}

struct cis_png_decoder {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t size;
    size_t offset;
    int64_t deadline_ns;
    int width;
    int height;
    int channels;
    int next_row;
    int opaque;
    // An interlaced image, decoded whole when the decoder starts; NULL otherwise.
    uint8_t *image;
    // What ended the decode (CIS_OK while it runs) and why.
    cis_status status;
    char text[sizeof(((cis_message *)0)->text)];
};

__attribute__((noreturn))
static void decoder_fail(cis_png_decoder *decoder, cis_status status, const char *text) {
    decoder->status = status;
    snprintf(decoder->text, sizeof decoder->text, "%s", text);
    png_longjmp(decoder->png, 1);
}

__attribute__((noreturn))
static void png_fail(png_structp png, png_const_charp text) {
    decoder_fail(png_get_error_ptr(png), CIS_CORRUPT, text);
}

static void png_ignore_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static void png_read_memory(png_structp png, png_bytep out, size_t count) {
    cis_png_decoder *decoder = png_get_io_ptr(png);
    if (count > decoder->size - decoder->offset) decoder_fail(decoder, CIS_CORRUPT, "the PNG data ended early");
    memcpy(out, decoder->data + decoder->offset, count);
    decoder->offset += count;
}

// Every entry point below starts with DECODER_TRY: a libpng error longjmps back to it and
// is recorded in the decoder, so later calls report it without touching libpng again.
#define DECODER_TRY(decoder, message)                                  \
    do {                                                               \
        if ((decoder)->status == CIS_OK) {                             \
            if (setjmp(png_jmpbuf((decoder)->png))) {                  \
                if ((decoder)->status == CIS_OK) (decoder)->status = CIS_CORRUPT; \
            }                                                          \
        }                                                              \
        if ((decoder)->status != CIS_OK) {                             \
            cis_message_set((message), (decoder)->text);               \
            return (decoder)->status;                                  \
        }                                                              \
    } while (0)

// A decoder with libpng's structures made, reading from `data`; NULL when memory runs out.
static cis_png_decoder *decoder_new(const uint8_t *data, size_t size, int64_t deadline_ns) {
    cis_png_decoder *decoder = calloc(1, sizeof *decoder);
    if (!decoder) return NULL;
    decoder->data = data;
    decoder->size = size;
    decoder->deadline_ns = deadline_ns;
    decoder->opaque = 1;
    decoder->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, decoder, png_fail, png_ignore_warning);
    if (decoder->png) decoder->info = png_create_info_struct(decoder->png);
    if (!decoder->info) {
        cis_png_decoder_free(decoder);
        return NULL;
    }
    png_set_read_fn(decoder->png, decoder, png_read_memory);
    return decoder;
}

// Reads the chunks up to the image data.
static cis_status decoder_read_info(cis_png_decoder *decoder, cis_message *message) {
    DECODER_TRY(decoder, message);
    png_read_info(decoder->png, decoder->info);
    return CIS_OK;
}

static int has_alpha(png_structp png, png_infop info) {
    return (png_get_color_type(png, info) & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS);
}

cis_status cis_png_read_header(const uint8_t *data, size_t size, cis_png_header *header,
                               cis_message *message) {
    if (!data || !header || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    memset(header, 0, sizeof *header);
    cis_png_decoder *decoder = decoder_new(data, size, INT64_MAX);
    if (!decoder) {
        cis_message_set(message, "no memory for a PNG decoder");
        return CIS_NO_MEMORY;
    }
    cis_status status = decoder_read_info(decoder, message);
    if (status == CIS_OK) {
        png_structp png = decoder->png;
        png_infop info = decoder->info;
        int64_t width = png_get_image_width(png, info), height = png_get_image_height(png, info);
        header->width = (int)width;
        header->height = (int)height;
        header->has_alpha = has_alpha(png, info) ? 1 : 0;
        header->bit_depth = png_get_bit_depth(png, info);
        header->interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE;
        int64_t output_row = width * (header->has_alpha ? 4 : 3);
        header->decode_bytes = 2 * (int64_t)png_get_rowbytes(png, info) + output_row +
                               (header->interlaced ? output_row * height : 0);
    }
    cis_png_decoder_free(decoder);
    return status;
}

// Asks libpng for 8-bit RGB or RGBA rows in sRGB and, for an interlaced image, decodes
// every pass into `decoder->image`.
static cis_status decoder_begin(cis_png_decoder *decoder, cis_message *message) {
    DECODER_TRY(decoder, message);
    png_structp png = decoder->png;
    png_infop info = decoder->info;
    png_read_info(png, info);
    int alpha = has_alpha(png, info);
    png_set_expand(png);  // palette to RGB, grey below 8 bits to 8, tRNS to alpha
    png_set_scale_16(png);
    png_set_gray_to_rgb(png);
    png_set_gamma(png, PNG_DEFAULT_sRGB, PNG_DEFAULT_sRGB);  // the file's gAMA, if any, to sRGB
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    decoder->width = (int)png_get_image_width(png, info);
    decoder->height = (int)png_get_image_height(png, info);
    decoder->channels = png_get_channels(png, info);
    if (decoder->channels != (alpha ? 4 : 3) || png_get_bit_depth(png, info) != 8)
        decoder_fail(decoder, CIS_CORRUPT, "unsupported PNG colour type");
    if (passes == 1) return CIS_OK;
    size_t row_bytes = (size_t)decoder->width * (size_t)decoder->channels;
    if (decoder->height != 0 && row_bytes > SIZE_MAX / (size_t)decoder->height)
        decoder_fail(decoder, CIS_NO_MEMORY, "the interlaced PNG does not fit in memory");
    decoder->image = malloc(row_bytes * (size_t)decoder->height);
    if (!decoder->image) decoder_fail(decoder, CIS_NO_MEMORY, "no memory for the interlaced PNG");
    for (int pass = 0; pass < passes; pass++) {
        for (int y = 0; y < decoder->height; y++) {
            if (cis_deadline_passed(decoder->deadline_ns)) decoder_fail(decoder, CIS_TOO_SLOW, CIS_TOO_SLOW_TEXT);
            png_read_row(png, decoder->image + (size_t)y * row_bytes, NULL);
        }
    }
    return CIS_OK;
}

cis_status cis_png_decoder_start(const uint8_t *data, size_t size, int64_t deadline_ns,
                                 cis_png_decoder **decoder, int *width, int *height, int *channels,
                                 cis_message *message) {
    if (!data || !decoder || !width || !height || !channels || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    *decoder = NULL;
    cis_png_decoder *d = decoder_new(data, size, deadline_ns);
    if (!d) {
        cis_message_set(message, "no memory for a PNG decoder");
        return CIS_NO_MEMORY;
    }
    cis_status status = decoder_begin(d, message);
    if (status != CIS_OK) {
        cis_png_decoder_free(d);
        return status;
    }
    *width = d->width;
    *height = d->height;
    *channels = d->channels;
    *decoder = d;
    return CIS_OK;
}

// Decodes row `next_row` into `row` (a libpng call: inside DECODER_TRY only).
static void decoder_next_row(cis_png_decoder *decoder, uint8_t *row) {
    if (decoder->next_row >= decoder->height) decoder_fail(decoder, CIS_BAD_ARGUMENT, "read past the last row");
    if (cis_deadline_passed(decoder->deadline_ns)) decoder_fail(decoder, CIS_TOO_SLOW, CIS_TOO_SLOW_TEXT);
    size_t row_bytes = (size_t)decoder->width * (size_t)decoder->channels;
    if (decoder->image)
        memcpy(row, decoder->image + (size_t)decoder->next_row * row_bytes, row_bytes);
    else
        png_read_row(decoder->png, row, NULL);
    decoder->next_row++;
    if (decoder->channels == 4 && decoder->opaque) {
        for (size_t x = 3; x < row_bytes; x += 4) {
            if (row[x] != 255) {
                decoder->opaque = 0;
                break;
            }
        }
    }
}

cis_status cis_png_decoder_read_row(cis_png_decoder *decoder, uint8_t *row, cis_message *message) {
    if (!decoder || !row || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    DECODER_TRY(decoder, message);
    decoder_next_row(decoder, row);
    return CIS_OK;
}

// Reads the rows not read yet into `row` and the chunks after the image data.
static cis_status decoder_read_rest(cis_png_decoder *decoder, uint8_t *row, cis_message *message) {
    DECODER_TRY(decoder, message);
    while (decoder->next_row < decoder->height) decoder_next_row(decoder, row);
    png_read_end(decoder->png, NULL);
    return CIS_OK;
}

cis_status cis_png_decoder_finish(cis_png_decoder *decoder, int *opaque, cis_message *message) {
    if (!decoder || !opaque || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    uint8_t *row = malloc((size_t)decoder->width * (size_t)decoder->channels + 1);
    if (!row) {
        cis_message_set(message, "no memory for a PNG row");
        return CIS_NO_MEMORY;
    }
    cis_status status = decoder_read_rest(decoder, row, message);
    free(row);
    *opaque = decoder->opaque;
    return status;
}

void cis_png_decoder_free(cis_png_decoder *decoder) {
    if (!decoder) return;
    if (decoder->png) png_destroy_read_struct(&decoder->png, decoder->info ? &decoder->info : NULL, NULL);
    free(decoder->image);
    free(decoder);
}

cis_status cis_png_encode(const uint8_t *pixels, int width, int height, int channels,
                          uint8_t **out, size_t *out_size, cis_message *message) {
    if (!pixels || !out || !out_size || !message || width < 1 || height < 1 ||
        (channels != 3 && channels != 4))
        return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    *out = NULL;
    *out_size = 0;
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = channels == 4 ? (PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA) : PNG_FORMAT_FLAG_COLOR;

    // The worst case size, so one compression pass is enough.
    png_alloc_size_t capacity = PNG_IMAGE_PNG_SIZE_MAX(image);
    uint8_t *buffer = malloc(capacity);
    if (!buffer) {
        cis_message_set(message, "no memory to encode the PNG");
        return CIS_NO_MEMORY;
    }
    png_alloc_size_t written = capacity;
    if (!png_image_write_to_memory(&image, buffer, &written, 0, pixels, 0, NULL)) {
        free(buffer);
        return png_image_failure(&image, message);
    }
    uint8_t *shrunk = realloc(buffer, written);
    *out = shrunk ? shrunk : buffer;
    *out_size = written;
    png_image_free(&image);
    return CIS_OK;
}

void cis_free(void *pointer) { free(pointer); }
