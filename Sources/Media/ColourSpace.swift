import CImageSupport
import SpotCore

/// The colour space a photo's pixels are in, when it is not sRGB: an embedded ICC profile,
/// or the colour primaries of a HEIF/AVIF `nclx` box (Display P3 on iPhones).
struct ColourSpace {
    let icc: [UInt8]?
    let nclxPrimaries: Int

    /// `nil` when neither says anything but sRGB (no profile; BT.709 or unspecified primaries).
    init?(icc: [UInt8]?, nclxPrimaries: Int = 2) {
        guard icc?.isEmpty == false || [9, 12].contains(nclxPrimaries) else { return nil }
        self.icc = icc?.isEmpty == false ? icc : nil
        self.nclxPrimaries = nclxPrimaries
    }

    /// Converts `buffer`'s pixels to sRGB in place (lcms2, perceptual intent). A profile
    /// lcms2 cannot read leaves them as they are.
    func convertToSRGB(_ buffer: PixelBuffer) throws(SpotError) {
        var message = cis_message()
        let status = (icc ?? []).withUnsafeBufferPointer { profile in
            cis_convert_to_srgb(buffer.base, Int32(buffer.width), Int32(buffer.height), Int32(buffer.channels), profile.baseAddress, profile.count, Int32(nclxPrimaries), &message)
        }
        try check(status, message, doing: "convert the thumbnail to sRGB")
    }
}
