// libpng shims over the simplified png_image API, which does its own setjmp and
// reports failures in image.message. Nothing here prints or exits.

#include "CImageSupport.h"
#include "shared.h"

#include <stdlib.h>
#include <string.h>

#include <png.h>

static cis_status png_image_failure(png_image *image, cis_message *message) {
    cis_message_set(message, image->message[0] ? image->message : "unreadable PNG data");
    png_image_free(image);
    return CIS_CORRUPT;
}

// Starts reading a PNG from memory (signature and chunks up to the image data).
static cis_status png_image_begin(png_image *image, const uint8_t *data, size_t size, cis_message *message) {
    cis_message_clear(message);
    memset(image, 0, sizeof *image);
    image->version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(image, data, size)) return png_image_failure(image, message);
    return CIS_OK;
}

cis_status cis_png_read_header(const uint8_t *data, size_t size, cis_png_header *header,
                               cis_message *message) {
    if (!data || !header || !message) return CIS_BAD_ARGUMENT;
    memset(header, 0, sizeof *header);
    png_image image;
    cis_status status = png_image_begin(&image, data, size, message);
    if (status != CIS_OK) return status;
    header->width = (int)image.width;
    header->height = (int)image.height;
    header->has_alpha = (image.format & PNG_FORMAT_FLAG_ALPHA) != 0;
    png_image_free(&image);
    return CIS_OK;
}

cis_status cis_png_decode(const uint8_t *data, size_t size, int with_alpha, int64_t max_pixels,
                          cis_pixels *out, cis_message *message) {
    if (!data || !out || !message) return CIS_BAD_ARGUMENT;
    memset(out, 0, sizeof *out);
    png_image image;
    cis_status status = png_image_begin(&image, data, size, message);
    if (status != CIS_OK) return status;

    if (max_pixels > 0 && (int64_t)image.width * (int64_t)image.height > max_pixels) {
        snprintf(message->text, sizeof message->text, "a %ux%u PNG is larger than %lld pixels",
                 image.width, image.height, (long long)max_pixels);
        png_image_free(&image);
        return CIS_CORRUPT;
    }
    int channels = with_alpha ? 4 : 3;
    image.format = with_alpha ? (PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA) : PNG_FORMAT_FLAG_COLOR;
    size_t row_bytes = (size_t)image.width * (size_t)channels;
    if (image.height != 0 && row_bytes > (SIZE_MAX - CIS_PIXEL_PADDING) / image.height) {
        png_image_free(&image);
        cis_message_set(message, "the PNG does not fit in memory");
        return CIS_NO_MEMORY;
    }
    uint8_t *pixels = malloc(row_bytes * image.height + CIS_PIXEL_PADDING);
    if (!pixels) {
        png_image_free(&image);
        cis_message_set(message, "no memory to decode the PNG");
        return CIS_NO_MEMORY;
    }
    memset(pixels + row_bytes * image.height, 0, CIS_PIXEL_PADDING);
    png_color white = {255, 255, 255};
    if (!png_image_finish_read(&image, with_alpha ? NULL : &white, pixels, (png_int_32)row_bytes, NULL)) {
        free(pixels);
        return png_image_failure(&image, message);
    }
    out->pixels = pixels;
    out->width = (int)image.width;
    out->height = (int)image.height;
    out->channels = channels;
    png_image_free(&image);
    return CIS_OK;
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
