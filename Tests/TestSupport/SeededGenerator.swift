import Foundation

/// SplitMix64: a seeded random number generator with the same sequence on every
/// platform, so a failing randomised test can be replayed.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A point uniform on the sphere: sin(latitude) and longitude uniform.
    public mutating func pointOnSphere() -> (latitude: Double, longitude: Double) {
        let z = Double.random(in: -1...1, using: &self)
        return (asin(z) * 180 / Double.pi, Double.random(in: -180..<180, using: &self))
    }
}

/// `count` random bytes (8 at a time, fast even in a debug build).
public func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { raw in
        for index in stride(from: 0, to: raw.count - 7, by: 8) {
            raw.storeBytes(of: generator.next(), toByteOffset: index, as: UInt64.self)
        }
    }
    return bytes
}
