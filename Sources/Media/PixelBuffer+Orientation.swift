extension PixelBuffer {
    /// The buffer turned upright for EXIF `orientation` (1…8): 6 rotates 90° clockwise,
    /// 8 counter-clockwise, 3 by 180°, 2/4 mirror, 5/7 transpose; 5…8 swap width and
    /// height. Returns `self` for 1 (or an invalid value), `nil` when memory runs out.
    func oriented(_ orientation: Int) -> PixelBuffer? {
        guard (2...8).contains(orientation) else { return self }
        let w = width, h = height, c = channels
        let last = (h - 1) * w
        // Output pixel (x, y) comes from source pixel origin + x * dx + y * dy.
        let (origin, dx, dy): (Int, Int, Int) =
            switch orientation {
            case 2: (w - 1, -1, w)
            case 3: (last + w - 1, -1, -w)
            case 4: (last, 1, -w)
            case 5: (0, w, 1)
            case 6: (last, -w, 1)
            case 7: (last + w - 1, -w, -1)
            default: (w - 1, w, -1)  // 8
            }
        let swapsAxes = orientation >= 5
        let outWidth = swapsAxes ? h : w
        let outHeight = swapsAxes ? w : h
        guard let output = PixelBuffer(width: outWidth, height: outHeight, channels: c) else { return nil }
        // Pixels move as 4-byte words: whole RGBA pixels, or RGB plus one byte that the
        // next pixel overwrites (reads and the last write stay inside the padding).
        var out = UnsafeMutableRawPointer(output.base)
        let input = UnsafeRawPointer(base)
        let step = dx &* c
        for y in 0..<outHeight {
            var source = (origin &+ y &* dy) &* c
            for _ in 0..<outWidth {
                out.storeBytes(of: input.loadUnaligned(fromByteOffset: source, as: UInt32.self), as: UInt32.self)
                out += c
                source &+= step
            }
        }
        return output
    }
}
