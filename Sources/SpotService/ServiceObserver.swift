/// Receives timings of the service's work, for metrics. Calls come from any task and must
/// be cheap and never block; the service works the same without an observer.
public protocol ServiceObserver: Sendable {
    /// An image was analysed (EXIF read, thumbnails made and stored) in `duration`. Also
    /// called when the analysis failed; not called when known thumbnails were reused.
    func analyzedImage(in duration: Duration)
}
