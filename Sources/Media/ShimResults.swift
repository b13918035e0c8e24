import CImageSupport
import SpotCore

// Turning what the C shims hand back into Swift values and `SpotError`s.

/// Copies bytes a shim malloc'd into an array and frees them.
func adoptEncoded(_ pointer: UnsafeMutablePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let pointer else { return [] }
    defer { cis_free(pointer) }
    return Array(UnsafeBufferPointer(start: pointer, count: size))
}

/// Maps a shim status to an error a person can act on.
func check(_ status: cis_status, _ message: cis_message, doing action: String, format: String = "JPEG") throws(SpotError) {
    let detail = withUnsafeBytes(of: message.text) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
    }
    switch status {
    case CIS_OK:
        return
    case CIS_CORRUPT:
        throw SpotError(
            .invalidContent,
            "The \(format) image is truncated or corrupt (\(detail)); upload the complete, undamaged file.")
    case CIS_TOO_SLOW:
        throw SpotError(
            .invalidContent,
            "The \(format) image takes too long to decode (\(detail)); upload a smaller one (fewer pixels; for JPEG, "
                + "baseline rather than progressive).")
    case CIS_NO_MEMORY:
        throw SpotError(.internal, "Not enough memory to \(action) (\(detail)).")
    default:
        throw SpotError(.internal, "Could not \(action): invalid arguments (\(detail)).")
    }
}
