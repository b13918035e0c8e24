#ifndef CIMAGESUPPORT_H
#define CIMAGESUPPORT_H

/*
 * C shims over libjpeg(-turbo), libpng, libheif, libwebp, lcms2 and libexif: the only
 * code in SpotStore that touches them. libjpeg reports fatal errors with longjmp; every function here that
 * calls it does its own setjmp, so a jump never crosses a Swift frame. Nothing here
 * exits or prints: failures come back as a status code plus a message.
 *
 * Memory returned through `uint8_t **` parameters is allocated with malloc; release it
 * with cis_free (or free). On failure nothing is returned and nothing needs freeing.
 *
 * libexif is exposed as is (it never longjmps): Swift calls it directly through this
 * module. Its headers are included below.
 */

#include <stddef.h>
#include <stdint.h>

#include <libexif/exif-data.h>
#include <libexif/exif-content.h>
#include <libexif/exif-entry.h>
#include <libexif/exif-ifd.h>
#include <libexif/exif-tag.h>
#include <libexif/exif-utils.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Outcome of a shim call.
typedef enum {
    /// Success; outputs are set.
    CIS_OK = 0,
    /// The data is corrupt, truncated or not decodable; the message says why.
    CIS_CORRUPT = 1,
    /// Out of memory (or a size that cannot be allocated).
    CIS_NO_MEMORY = 2,
    /// The caller passed invalid arguments (a bug on the Swift side).
    CIS_BAD_ARGUMENT = 3,
    /// The decode's deadline passed before it finished; nothing is returned.
    CIS_TOO_SLOW = 4
} cis_status;

/// Now on the monotonic clock (CLOCK_MONOTONIC), in nanoseconds: the clock every
/// `deadline_ns` below is read on. A deadline already passed fails the decode at its
/// first check.
int64_t cis_monotonic_ns(void);

/// A human-readable reason for a failure, NUL-terminated (empty on success).
typedef struct {
    char text[256];
} cis_message;

/// What a JPEG header says, without decoding any pixels.
typedef struct {
    int width;
    int height;
    /// Components in the file: 1 (grey), 3 (YCbCr/RGB) or 4 (CMYK/YCCK).
    int components;
    /// 1 when the file is progressive (multi-scan).
    int progressive;
    /// Start-of-scan markers in the whole file, counted in the bytes without decoding.
    int scans;
    /// The most memory decoding at full scale takes: the whole image's DCT coefficients
    /// when the file has more than one scan (libjpeg keeps them all), plus a row group.
    int64_t decode_bytes;
} cis_jpeg_header;

/// Pixels decoded by a shim: `width * height * channels` bytes, rows packed without
/// padding, followed by CIS_PIXEL_PADDING spare bytes (so vector loads may read a little
/// past the last pixel). Free `pixels` with cis_free.
typedef struct {
    uint8_t *pixels;
    int width;
    int height;
    int channels;
} cis_pixels;

/// Bytes of a `cis_pixels` buffer past the last pixel that may be read (not written).
#define CIS_PIXEL_PADDING 16

/// Reads the JPEG header (markers up to the first scan) from memory and counts the scans.
cis_status cis_jpeg_read_header(const uint8_t *data, size_t size, cis_jpeg_header *header,
                                cis_message *message);

/// A JPEG decode in progress (opaque). Rows come out top to bottom, so a caller can
/// resample while decoding and never hold the whole image.
typedef struct cis_jpeg_decoder cis_jpeg_decoder;

/// Starts decoding a JPEG from memory (which must outlive the decoder) to 8-bit RGB,
/// scaled by `scale_eighths`/8 (1...16) in the DCT domain. Grey, YCbCr, RGB, CMYK and
/// YCCK files all come out RGB. `fast` selects the fast integer IDCT and plain
/// upsampling; otherwise the accurate IDCT and fancy upsampling. Every call on the
/// decoder fails with CIS_TOO_SLOW once `deadline_ns` (cis_monotonic_ns) has passed,
/// checked at least once per row group, also while a progressive file's scans are read.
/// On success `*decoder` is set (free it with cis_jpeg_decoder_free) with the output
/// size in `*width`×`*height`.
cis_status cis_jpeg_decoder_start(const uint8_t *data, size_t size, int scale_eighths, int fast,
                                  int64_t deadline_ns, cis_jpeg_decoder **decoder, int *width,
                                  int *height, cis_message *message);

/// Decodes the next row into `row` (width * 3 bytes). Truncated or corrupt entropy data
/// ("Premature end of JPEG file" and similar warnings) is an error, not grey fill.
/// After an error the decoder only answers with that error.
cis_status cis_jpeg_decoder_read_row(cis_jpeg_decoder *decoder, uint8_t *row, cis_message *message);

/// Decodes any rows not read yet and reads to the end of the image, so a file cut off
/// after its last row is refused too.
cis_status cis_jpeg_decoder_finish(cis_jpeg_decoder *decoder, cis_message *message);

/// Releases the decoder (NULL is fine).
void cis_jpeg_decoder_free(cis_jpeg_decoder *decoder);

/// Encodes packed 8-bit RGB (`channels` == 3) or grey (`channels` == 1) rows as a
/// baseline JPEG with optimised Huffman tables and 4:2:0 chroma, with no metadata but
/// the JFIF header. `*out` (malloc'd, `*out_size` bytes) is set only on success.
cis_status cis_jpeg_encode(const uint8_t *pixels, int width, int height, int channels,
                           int quality, uint8_t **out, size_t *out_size, cis_message *message);

/// What a PNG header says, without decoding pixels.
typedef struct {
    int width;
    int height;
    /// 1 when the image has an alpha channel or a tRNS chunk.
    int has_alpha;
    /// Bits per sample as stored: 1, 2, 4, 8 or 16.
    int bit_depth;
    /// 1 when the image is Adam7-interlaced.
    int interlaced;
    /// The most memory decoding takes: libpng's two rows of stored samples (16-bit ones
    /// included) and one output row; an interlaced image also needs all its output rows.
    int64_t decode_bytes;
} cis_png_header;

/// Reads the PNG header (chunks up to the first IDAT) from memory.
cis_status cis_png_read_header(const uint8_t *data, size_t size, cis_png_header *header,
                               cis_message *message);

/// A PNG decode in progress (opaque): rows come out top to bottom as 8-bit sRGB, RGBA
/// (4 channels) when the image has alpha (a channel or tRNS), else RGB (3), so a caller
/// can resample while decoding and never hold the whole image. An interlaced image is
/// decoded whole when the decoder starts (its last pass completes every row).
typedef struct cis_png_decoder cis_png_decoder;

/// Starts decoding a PNG from memory (which must outlive the decoder). Every call on the
/// decoder fails with CIS_TOO_SLOW once `deadline_ns` (cis_monotonic_ns) has passed,
/// checked once per row. On success `*decoder` is set (free it with
/// cis_png_decoder_free) with the size and channels in `*width`, `*height`, `*channels`.
cis_status cis_png_decoder_start(const uint8_t *data, size_t size, int64_t deadline_ns,
                                 cis_png_decoder **decoder, int *width, int *height, int *channels,
                                 cis_message *message);

/// Decodes the next row into `row` (width * channels bytes). After an error the decoder
/// only answers with that error.
cis_status cis_png_decoder_read_row(cis_png_decoder *decoder, uint8_t *row, cis_message *message);

/// Decodes any rows not read yet and reads to the end of the file (IEND), so a file cut
/// off after its last row is refused too. `*opaque` is set to 1 when every pixel's alpha
/// was 255 (always for RGB).
cis_status cis_png_decoder_finish(cis_png_decoder *decoder, int *opaque, cis_message *message);

/// Releases the decoder (NULL is fine).
void cis_png_decoder_free(cis_png_decoder *decoder);

/// Encodes packed 8-bit RGB (3) or RGBA (4 channels, straight alpha) as a PNG with no
/// metadata chunks. `*out` (malloc'd, `*out_size` bytes) is set only on success.
cis_status cis_png_encode(const uint8_t *pixels, int width, int height, int channels,
                          uint8_t **out, size_t *out_size, cis_message *message);

/// What a HEIF (HEIC, AVIF) file says about its primary image, without decoding pixels.
typedef struct {
    /// As stored (the `ispe` box): what the pixel limit is checked against.
    int stored_width;
    int stored_height;
    /// Upright, after the file's rotation, mirroring and crop: what decoding gives.
    int width;
    int height;
    int has_alpha;
    /// The first embedded thumbnail's upright size; 0 when there is none.
    int thumbnail_width;
    int thumbnail_height;
    /// The most memory decoding the primary image, or the thumbnail, takes: libheif's
    /// planes at the stored bit depth, its 8-bit RGB(A) image and the copy handed back.
    int64_t decode_bytes;
    int64_t thumbnail_decode_bytes;
} cis_heif_header;

/// A HEIF file read from memory (opaque); the memory must outlive it.
typedef struct cis_heif cis_heif;

/// Reads the container (boxes, item properties) and finds the primary image. On success
/// `*file` is set (free it with cis_heif_free).
cis_status cis_heif_open(const uint8_t *data, size_t size, cis_heif **file, cis_heif_header *header,
                         cis_message *message);

/// The primary image's first metadata item of `type` ("Exif", "mime" for XMP) as stored;
/// `*out` stays NULL when there is none (not an error).
cis_status cis_heif_metadata(const cis_heif *file, const char *type, uint8_t **out, size_t *out_size,
                             cis_message *message);

/// The primary image's colour: its ICC profile (`*icc` NULL when none) and the nclx box's
/// colour primaries (2, unspecified, when there is none).
cis_status cis_heif_color_profile(const cis_heif *file, uint8_t **icc, size_t *icc_size, int *primaries,
                                  cis_message *message);

/// Decodes the primary image, or its first thumbnail when `use_thumbnail`, upright, to 8-bit
/// RGBA (4 channels) when `with_alpha`, else RGB. Truncated or corrupt data is an error.
/// libheif 1.15 cannot stop a decode once begun: `deadline_ns` is checked before it
/// starts and after it ends (CIS_TOO_SLOW), so the memory budget is what bounds its cost.
cis_status cis_heif_decode(const cis_heif *file, int use_thumbnail, int with_alpha, int64_t deadline_ns,
                           cis_pixels *out, cis_message *message);

/// Releases the file (NULL is fine).
void cis_heif_free(cis_heif *file);

/// What a WebP header says (VP8, VP8L or VP8X), without decoding pixels.
typedef struct {
    int width;
    int height;
    int has_alpha;
    /// The most memory decoding takes: the output, plus a whole ARGB image for lossless
    /// (VP8L) data.
    int64_t decode_bytes;
} cis_webp_header;

/// Reads the WebP header; animated files are refused.
cis_status cis_webp_read_header(const uint8_t *data, size_t size, cis_webp_header *header, cis_message *message);

/// The payload of the first chunk `fourcc` ("EXIF", "ICCP", "XMP ") of a WebP file;
/// `*out` stays NULL when there is none (not an error).
cis_status cis_webp_chunk(const uint8_t *data, size_t size, const char *fourcc, uint8_t **out, size_t *out_size,
                          cis_message *message);

/// Decodes a WebP to 8-bit RGBA (4 channels) when `with_alpha`, else RGB. The data is fed
/// to libwebp's incremental decoder a slice at a time, and `deadline_ns`
/// (cis_monotonic_ns) is checked between slices (CIS_TOO_SLOW once passed).
cis_status cis_webp_decode(const uint8_t *data, size_t size, int with_alpha, int64_t deadline_ns, cis_pixels *out,
                           cis_message *message);

/// Encodes packed 8-bit RGB (3) or RGBA (4 channels, straight alpha) as a lossy WebP
/// (`quality` 0–100) with no metadata chunks. `*out` (malloc'd, `*out_size` bytes) is set
/// only on success.
cis_status cis_webp_encode(const uint8_t *pixels, int width, int height, int channels, int quality, uint8_t **out,
                           size_t *out_size, cis_message *message);

/// Converts packed 8-bit RGB or RGBA pixels in place to sRGB, from the ICC profile `icc`
/// when there is one, else from the nclx colour primaries `nclx_primaries` (12 Display P3,
/// 9 BT.2020; others are taken as sRGB already). A profile lcms2 cannot read, or one that
/// is not RGB, leaves the pixels as they are.
cis_status cis_convert_to_srgb(uint8_t *pixels, int width, int height, int channels, const uint8_t *icc,
                               size_t icc_size, int nclx_primaries, cis_message *message);

/// Frees memory returned by this module.
void cis_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif
