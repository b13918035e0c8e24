import CImageSupport

/// When a decode must be over, on the monotonic clock the C decoders read. A decode still
/// running then is stopped and refused (`SpotError(.invalidContent)`).
public struct DecodeDeadline: Sendable, Equatable {
    /// Nanoseconds on `CLOCK_MONOTONIC`.
    let nanoseconds: Int64

    /// `limit` from now.
    public static func after(_ limit: Duration) -> DecodeDeadline {
        let (seconds, attoseconds) = limit.components
        let limitNanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !limitNanoseconds.overflow else { return DecodeDeadline(nanoseconds: .max) }
        let total = cis_monotonic_ns().addingReportingOverflow(limitNanoseconds.partialValue + attoseconds / 1_000_000_000)
        return DecodeDeadline(nanoseconds: total.overflow ? .max : total.partialValue)
    }

    /// A deadline already passed: a decode given it is refused at its first check.
    public static let passed = DecodeDeadline(nanoseconds: 0)
}
