// lcms2 shim: pixels in a photo's colour space (an embedded ICC profile, or the primaries an
// AVIF/HEIF nclx box names) converted to sRGB, so that thumbnails look on an sRGB screen as
// the original does. lcms2 reports errors through a handler (never exits); a profile it
// cannot read leaves the pixels as they are.

#include "CImageSupport.h"
#include "shared.h"

#include <string.h>

#include <lcms2.h>

// RGB primaries (x, y) of the nclx codes handled here, all with the D65 white point.
static int nclx_primaries(int code, cmsCIExyYTRIPLE *primaries) {
    switch (code) {
    case 12:  // SMPTE EG 432-1: Display P3, as iPhones write
        *primaries = (cmsCIExyYTRIPLE){{0.680, 0.320, 1}, {0.265, 0.690, 1}, {0.150, 0.060, 1}};
        return 1;
    case 9:  // ITU-R BT.2020
        *primaries = (cmsCIExyYTRIPLE){{0.708, 0.292, 1}, {0.170, 0.797, 1}, {0.131, 0.046, 1}};
        return 1;
    default:  // BT.709 (sRGB's own), unspecified or not handled: already sRGB
        return 0;
    }
}

// An RGB profile with nclx primaries and the sRGB tone curve.
static cmsHPROFILE nclx_profile(int code) {
    cmsCIExyYTRIPLE primaries;
    if (!nclx_primaries(code, &primaries)) return NULL;
    cmsCIExyY white = {0.3127, 0.3290, 1};
    // the sRGB curve: IEC 61966-2-1 as a parametric curve of type 4
    cmsFloat64Number parameters[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
    cmsToneCurve *curve = cmsBuildParametricToneCurve(NULL, 4, parameters);
    if (!curve) return NULL;
    cmsToneCurve *curves[3] = {curve, curve, curve};
    cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsFreeToneCurve(curve);
    return profile;
}

cis_status cis_convert_to_srgb(uint8_t *pixels, int width, int height, int channels, const uint8_t *icc,
                               size_t icc_size, int nclx_primaries_code, cis_message *message) {
    if (!pixels || !message || (channels != 3 && channels != 4) || width <= 0 || height <= 0) return CIS_BAD_ARGUMENT;
    cis_message_clear(message);
    cmsHPROFILE source = icc && icc_size > 0 ? cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_size)
                                             : nclx_profile(nclx_primaries_code);
    if (!source) return CIS_OK;
    if (cmsGetColorSpace(source) != cmsSigRgbData) {  // a grey or CMYK profile on RGB pixels: nothing to do
        cmsCloseProfile(source);
        return CIS_OK;
    }
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    cmsUInt32Number format = channels == 4 ? TYPE_RGBA_8 : TYPE_RGB_8;
    cmsHTRANSFORM transform = srgb ? cmsCreateTransform(source, format, srgb, format, INTENT_PERCEPTUAL,
                                                        channels == 4 ? cmsFLAGS_COPY_ALPHA : 0)
                                   : NULL;
    cmsCloseProfile(source);
    if (srgb) cmsCloseProfile(srgb);
    if (!transform) return CIS_OK;
    size_t row_bytes = (size_t)width * (size_t)channels;
    for (int y = 0; y < height; y++) {
        uint8_t *row = pixels + (size_t)y * row_bytes;
        cmsDoTransform(transform, row, row, (cmsUInt32Number)width);
    }
    cmsDeleteTransform(transform);
    return CIS_OK;
}
