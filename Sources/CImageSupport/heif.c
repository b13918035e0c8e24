// libheif shims: HEIC/HEIF (HEVC) and AVIF (AV1) files read from memory. libheif reports
// failures as heif_error values (it never longjmps or exits); they become a status and a
// message here. Decoding applies the file's transforms (irot, imir, clap), so pixels come
// out upright, and converts 10/12-bit images to 8 bits.

#include "CImageSupport.h"
#include "shared.h"

#include <stdlib.h>
#include <string.h>

#include <libheif/heif.h>

struct cis_heif {
    struct heif_context *context;
    struct heif_image_handle *primary;
};

static cis_status heif_failure(struct heif_error error, const char *doing, cis_message *message) {
    snprintf(message->text, sizeof message->text, "%s: %s", doing, error.message ? error.message : "unknown libheif error");
    return error.code == heif_error_Memory_allocation_error ? CIS_NO_MEMORY : CIS_CORRUPT;
}

// What decoding a `width`×`height` image takes: libheif's planes (Y, Cb, Cr and alpha,
// at most full size, 2 bytes a sample past 8 bits), its interleaved 8-bit image and the
// copy handed back.
static int64_t decode_bytes(int64_t width, int64_t height, int alpha, int wide) {
    int channels = alpha ? 4 : 3;
    return width * height * (channels * (wide ? 2 : 1) + 2 * channels);
}

cis_status cis_heif_open(const uint8_t *data, size_t size, cis_heif **out, cis_heif_header *header,
                         cis_message *message) {
    if (!data || !out || !header || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    memset(header, 0, sizeof *header);
    *out = NULL;
    cis_heif *file = calloc(1, sizeof *file);
    if (!file || !(file->context = heif_context_alloc())) {
        free(file);
        cis_message_set(message, "cannot allocate a HEIF context");
        return CIS_NO_MEMORY;
    }
    struct heif_error error = heif_context_read_from_memory_without_copy(file->context, data, size, NULL);
    if (error.code == heif_error_Ok) error = heif_context_get_primary_image_handle(file->context, &file->primary);
    if (error.code != heif_error_Ok) {
        cis_status status = heif_failure(error, "cannot read the HEIF container", message);
        cis_heif_free(file);
        return status;
    }
    header->stored_width = heif_image_handle_get_ispe_width(file->primary);
    header->stored_height = heif_image_handle_get_ispe_height(file->primary);
    header->width = heif_image_handle_get_width(file->primary);
    header->height = heif_image_handle_get_height(file->primary);
    header->has_alpha = heif_image_handle_has_alpha_channel(file->primary);
    int wide = heif_image_handle_get_luma_bits_per_pixel(file->primary) > 8;
    header->decode_bytes = decode_bytes(header->stored_width, header->stored_height, header->has_alpha, wide);
    if (heif_image_handle_get_number_of_thumbnails(file->primary) > 0) {
        heif_item_id id;
        struct heif_image_handle *thumbnail = NULL;
        heif_image_handle_get_list_of_thumbnail_IDs(file->primary, &id, 1);
        if (heif_image_handle_get_thumbnail(file->primary, id, &thumbnail).code == heif_error_Ok) {
            header->thumbnail_width = heif_image_handle_get_width(thumbnail);
            header->thumbnail_height = heif_image_handle_get_height(thumbnail);
            header->thumbnail_decode_bytes = decode_bytes(header->thumbnail_width, header->thumbnail_height,
                                                          header->has_alpha, heif_image_handle_get_luma_bits_per_pixel(thumbnail) > 8);
            heif_image_handle_release(thumbnail);
        }
    }
    *out = file;
    return CIS_OK;
}

cis_status cis_heif_metadata(const cis_heif *file, const char *type, uint8_t **out, size_t *out_size,
                             cis_message *message) {
    if (!file || !type || !out || !out_size || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    *out = NULL;
    *out_size = 0;
    heif_item_id id;
    if (heif_image_handle_get_list_of_metadata_block_IDs(file->primary, type, &id, 1) < 1) return CIS_OK;
    size_t size = heif_image_handle_get_metadata_size(file->primary, id);
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes) {
        cis_message_set(message, "the HEIF metadata does not fit in memory");
        return CIS_NO_MEMORY;
    }
    struct heif_error error = heif_image_handle_get_metadata(file->primary, id, bytes);
    if (error.code != heif_error_Ok) {
        free(bytes);
        return heif_failure(error, "cannot read the HEIF metadata", message);
    }
    *out = bytes;
    *out_size = size;
    return CIS_OK;
}

cis_status cis_heif_color_profile(const cis_heif *file, uint8_t **icc, size_t *icc_size, int *primaries,
                                  cis_message *message) {
    if (!file || !icc || !icc_size || !primaries || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    *icc = NULL;
    *icc_size = 0;
    *primaries = 2;  // unspecified
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_handle_get_nclx_color_profile(file->primary, &nclx).code == heif_error_Ok && nclx) {
        *primaries = nclx->color_primaries;
        heif_nclx_color_profile_free(nclx);
    }
    size_t size = heif_image_handle_get_raw_color_profile_size(file->primary);
    if (size == 0) return CIS_OK;
    uint8_t *bytes = malloc(size);
    if (!bytes) {
        cis_message_set(message, "the HEIF colour profile does not fit in memory");
        return CIS_NO_MEMORY;
    }
    struct heif_error error = heif_image_handle_get_raw_color_profile(file->primary, bytes);
    if (error.code != heif_error_Ok) {
        free(bytes);
        return heif_failure(error, "cannot read the HEIF colour profile", message);
    }
    *icc = bytes;
    *icc_size = size;
    return CIS_OK;
}

cis_status cis_heif_decode(const cis_heif *file, int use_thumbnail, int with_alpha, int64_t deadline_ns,
                           cis_pixels *out, cis_message *message) {
    if (!file || !out || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    memset(out, 0, sizeof *out);
    if (cis_deadline_passed(deadline_ns)) {
        cis_message_set(message, CIS_TOO_SLOW_TEXT);
        return CIS_TOO_SLOW;
    }
    struct heif_image_handle *handle = file->primary;
    if (use_thumbnail) {
        heif_item_id id;
        if (heif_image_handle_get_list_of_thumbnail_IDs(file->primary, &id, 1) < 1) return CIS_BAD_ARGUMENT;
        struct heif_error error = heif_image_handle_get_thumbnail(file->primary, id, &handle);
        if (error.code != heif_error_Ok) return heif_failure(error, "cannot read the HEIF thumbnail", message);
    }
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (!options) {
        if (handle != file->primary) heif_image_handle_release(handle);
        cis_message_set(message, "cannot allocate HEIF decoding options");
        return CIS_NO_MEMORY;
    }
    options->convert_hdr_to_8bit = 1;
    options->strict_decoding = 1;
    int channels = with_alpha ? 4 : 3;
    struct heif_image *image = NULL;
    struct heif_error error = heif_decode_image(handle, &image, heif_colorspace_RGB,
                                                with_alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB,
                                                options);
    heif_decoding_options_free(options);
    if (handle != file->primary) heif_image_handle_release(handle);
    if (error.code != heif_error_Ok) return heif_failure(error, "cannot decode the HEIF image", message);
    if (cis_deadline_passed(deadline_ns)) {
        heif_image_release(image);
        cis_message_set(message, CIS_TOO_SLOW_TEXT);
        return CIS_TOO_SLOW;
    }

    int width = heif_image_get_width(image, heif_channel_interleaved);
    int height = heif_image_get_height(image, heif_channel_interleaved);
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    size_t row_bytes = (size_t)width * (size_t)channels;
    if (!plane || width <= 0 || height <= 0 || (size_t)stride < row_bytes) {
        heif_image_release(image);
        cis_message_set(message, "the decoded HEIF image has no pixels");
        return CIS_CORRUPT;
    }
    uint8_t *pixels = malloc(row_bytes * (size_t)height + CIS_PIXEL_PADDING);
    if (!pixels) {
        heif_image_release(image);
        cis_message_set(message, "the HEIF image does not fit in memory");
        return CIS_NO_MEMORY;
    }
    for (int y = 0; y < height; y++) memcpy(pixels + (size_t)y * row_bytes, plane + (size_t)y * (size_t)stride, row_bytes);
    memset(pixels + row_bytes * (size_t)height, 0, CIS_PIXEL_PADDING);
    heif_image_release(image);
    out->pixels = pixels;
    out->width = width;
    out->height = height;
    out->channels = channels;
    return CIS_OK;
}

void cis_heif_free(cis_heif *file) {
    if (!file) return;
    if (file->primary) heif_image_handle_release(file->primary);
    if (file->context) heif_context_free(file->context);
    free(file);
}
