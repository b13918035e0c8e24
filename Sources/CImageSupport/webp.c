// libwebp shims: WebP (lossy VP8, lossless VP8L, extended VP8X with alpha and metadata
// chunks) decoded from memory, and thumbnails encoded. libwebp returns status codes;
// nothing here prints or exits.

#include "CImageSupport.h"
#include "shared.h"

#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

static const char *vp8_status_text(VP8StatusCode status) {
    switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data (truncated)";
    default: return "undecodable data";
    }
}

static cis_status vp8_failure(VP8StatusCode status, const char *doing, cis_message *message) {
    snprintf(message->text, sizeof message->text, "%s: %s", doing, vp8_status_text(status));
    return status == VP8_STATUS_OUT_OF_MEMORY ? CIS_NO_MEMORY : CIS_CORRUPT;
}

cis_status cis_webp_read_header(const uint8_t *data, size_t size, cis_webp_header *header, cis_message *message) {
    if (!data || !header || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    memset(header, 0, sizeof *header);
    WebPBitstreamFeatures features;
    VP8StatusCode status = WebPGetFeatures(data, size, &features);
    if (status != VP8_STATUS_OK) return vp8_failure(status, "cannot read the WebP header", message);
    if (features.has_animation) {
        cis_message_set(message, "animated WebP files are not photos");
        return CIS_CORRUPT;
    }
    header->width = features.width;
    header->height = features.height;
    header->has_alpha = features.has_alpha;
    // VP8L keeps a whole ARGB image; lossy data with alpha a whole alpha plane.
    int64_t extra = features.format == 2 ? 4 : (features.has_alpha ? 1 : 0);
    header->decode_bytes = (int64_t)features.width * features.height * ((features.has_alpha ? 4 : 3) + extra);
    return CIS_OK;
}

cis_status cis_webp_chunk(const uint8_t *data, size_t size, const char *fourcc, uint8_t **out, size_t *out_size,
                          cis_message *message) {
    if (!data || !fourcc || !out || !out_size || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    *out = NULL;
    *out_size = 0;
    WebPData input = {data, size};
    WebPDemuxer *demuxer = WebPDemux(&input);
    if (!demuxer) {
        cis_message_set(message, "cannot read the WebP container");
        return CIS_CORRUPT;
    }
    WebPChunkIterator chunk;
    if (WebPDemuxGetChunk(demuxer, fourcc, 1, &chunk)) {
        uint8_t *bytes = malloc(chunk.chunk.size ? chunk.chunk.size : 1);
        if (!bytes) {
            WebPDemuxReleaseChunkIterator(&chunk);
            WebPDemuxDelete(demuxer);
            cis_message_set(message, "the WebP chunk does not fit in memory");
            return CIS_NO_MEMORY;
        }
        memcpy(bytes, chunk.chunk.bytes, chunk.chunk.size);
        *out = bytes;
        *out_size = chunk.chunk.size;
        WebPDemuxReleaseChunkIterator(&chunk);
    }
    WebPDemuxDelete(demuxer);
    return CIS_OK;
}

// Bytes handed to the incremental decoder between two looks at the deadline.
#define CIS_WEBP_SLICE 65536

cis_status cis_webp_decode(const uint8_t *data, size_t size, int with_alpha, int64_t deadline_ns, cis_pixels *out,
                           cis_message *message) {
    if (!data || !out || !message) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    memset(out, 0, sizeof *out);
    int width = 0, height = 0;
    if (!WebPGetInfo(data, size, &width, &height) || width <= 0 || height <= 0) {
        cis_message_set(message, "cannot read the WebP header");
        return CIS_CORRUPT;
    }
    int channels = with_alpha ? 4 : 3;
    size_t row_bytes = (size_t)width * (size_t)channels;
    size_t total = row_bytes * (size_t)height;
    uint8_t *pixels = malloc(total + CIS_PIXEL_PADDING);
    if (!pixels) {
        cis_message_set(message, "the WebP image does not fit in memory");
        return CIS_NO_MEMORY;
    }
    memset(pixels + total, 0, CIS_PIXEL_PADDING);
    WebPIDecoder *decoder = WebPINewRGB(with_alpha ? MODE_RGBA : MODE_RGB, pixels, total, (int)row_bytes);
    if (!decoder) {
        free(pixels);
        cis_message_set(message, "no memory for a WebP decoder");
        return CIS_NO_MEMORY;
    }
    VP8StatusCode status = VP8_STATUS_SUSPENDED;
    size_t fed = 0;
    int late = 0;
    while (status == VP8_STATUS_SUSPENDED && fed < size && !(late = cis_deadline_passed(deadline_ns))) {
        fed += size - fed < CIS_WEBP_SLICE ? size - fed : CIS_WEBP_SLICE;
        status = WebPIUpdate(decoder, data, fed);
    }
    WebPIDelete(decoder);
    if (status != VP8_STATUS_OK) {
        free(pixels);
        if (late) {
            cis_message_set(message, CIS_TOO_SLOW_TEXT);
            return CIS_TOO_SLOW;
        }
        return vp8_failure(status == VP8_STATUS_SUSPENDED ? VP8_STATUS_NOT_ENOUGH_DATA : status,
                           "the WebP image data is truncated or corrupt", message);
    }
    out->pixels = pixels;
    out->width = width;
    out->height = height;
    out->channels = channels;
    return CIS_OK;
}

cis_status cis_webp_encode(const uint8_t *pixels, int width, int height, int channels, int quality, uint8_t **out,
                           size_t *out_size, cis_message *message) {
    if (!pixels || !out || !out_size || !message || (channels != 3 && channels != 4)) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    *out = NULL;
    *out_size = 0;
    WebPConfig config;
    WebPPicture picture;
    if (!WebPConfigPreset(&config, WEBP_PRESET_PHOTO, (float)quality) || !WebPPictureInit(&picture)) {
        cis_message_set(message, "libwebp does not match the version SpotStore was built with");
        return CIS_BAD_ARGUMENT;
    }
    config.method = 2;  // of 0 (fastest) to 6: ~1.8x as fast as the default 4, files ~6% larger (bench/README.md)
    picture.width = width;
    picture.height = height;
    picture.use_argb = 0;
    int imported = channels == 4 ? WebPPictureImportRGBA(&picture, pixels, width * 4)
                                 : WebPPictureImportRGB(&picture, pixels, width * 3);
    if (!imported) {
        WebPPictureFree(&picture);
        cis_message_set(message, "the WebP thumbnail does not fit in memory");
        return CIS_NO_MEMORY;
    }
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    int encoded = WebPEncode(&config, &picture);
    WebPPictureFree(&picture);
    if (!encoded) {
        WebPMemoryWriterClear(&writer);
        snprintf(message->text, sizeof message->text, "libwebp could not encode the thumbnail (error %d)", picture.error_code);
        return picture.error_code == VP8_ENC_ERROR_OUT_OF_MEMORY ? CIS_NO_MEMORY : CIS_BAD_ARGUMENT;
    }
    // WebPFree and free may differ: hand back memory cis_free can release.
    uint8_t *copy = malloc(writer.size ? writer.size : 1);
    if (!copy) {
        WebPMemoryWriterClear(&writer);
        cis_message_set(message, "the WebP thumbnail does not fit in memory");
        return CIS_NO_MEMORY;
    }
    memcpy(copy, writer.mem, writer.size);
    *out = copy;
    *out_size = writer.size;
    WebPMemoryWriterClear(&writer);
    return CIS_OK;
}
