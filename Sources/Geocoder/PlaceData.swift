import Foundation
import SpotCore

/// The decoded contents of `places.bin`; the format is described in
/// geodata/build-places.py. Every index in it is checked on load, so lookups never trap
/// on a corrupt file.
struct PlaceData: Sendable {
    static let magic = Array("SPOTGEO1".utf8)
    static let formatVersion: UInt32 = 1
    static let headerSize = 64
    static let noRegion: UInt16 = 0xFFFF

    let latitudeE5: [Int32]
    let longitudeE5: [Int32]
    let population: [UInt32]
    let countryIndex: [UInt16]
    let regionIndex: [UInt16]
    /// Split axes of the all-places tree, whose node `i` is place `i`.
    let axes: [UInt8]
    let names: [String]
    let regionNames: [String]
    let countryNames: [String]
    let countryCodes: [String]

    var count: Int { names.count }

    /// Reads the file at `path`.
    init(contentsOf path: String) throws(SpotError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            throw SpotError(.notFound, "geocoder data not found: \(path)")
        } catch {
            throw SpotError(.internal, "cannot read geocoder data \(path): \(error.localizedDescription)")
        }
        let decoded = data.withUnsafeBytes { bytes in Result { () throws(SpotError) in try PlaceData(bytes: bytes, source: path) } }
        self = try decoded.get()
    }

    /// Decodes `bytes`; `source` names them in error messages.
    init(bytes: UnsafeRawBufferPointer, source: String) throws(SpotError) {
        var reader = Reader(bytes: bytes, source: source)
        guard bytes.count >= Self.headerSize, Array(bytes[0..<8]) == Self.magic else {
            throw reader.corrupt("not a SpotStore geocoder file")
        }
        reader.offset = 8
        let version = try reader.integer(UInt32.self)
        guard version == Self.formatVersion else {
            throw reader.corrupt("format version \(version), this build reads \(Self.formatVersion)")
        }
        let placeCount = Int(try reader.integer(UInt32.self))
        let regionCount = Int(try reader.integer(UInt32.self))
        let countryCount = Int(try reader.integer(UInt32.self))
        let stringCount = Int(try reader.integer(UInt32.self))
        let stringBytes = Int(try reader.integer(UInt32.self))
        let fileSize = Int(try reader.integer(UInt32.self))
        guard fileSize == bytes.count else {
            throw reader.corrupt("\(bytes.count) bytes, the header says \(fileSize)")
        }
        guard placeCount > 0, countryCount > 0, regionCount < Int(Self.noRegion), countryCount <= Int(UInt16.max),
            stringCount == placeCount + regionCount + 2 * countryCount
        else { throw reader.corrupt("inconsistent counts in the header") }
        reader.offset = Self.headerSize

        latitudeE5 = try reader.array(Int32.self, count: placeCount)
        longitudeE5 = try reader.array(Int32.self, count: placeCount)
        population = try reader.array(UInt32.self, count: placeCount)
        countryIndex = try reader.array(UInt16.self, count: placeCount)
        regionIndex = try reader.array(UInt16.self, count: placeCount)
        axes = try reader.array(UInt8.self, count: placeCount)
        let stringEnds = try reader.array(UInt32.self, count: stringCount)
        let stringStart = reader.offset
        guard bytes.count - stringStart == (stringBytes + 7) & ~7 else { throw reader.corrupt("string table size mismatch") }

        guard latitudeE5.allSatisfy({ abs($0) <= 9_000_000 }), longitudeE5.allSatisfy({ abs($0) <= 18_000_000 }),
            axes.allSatisfy({ $0 < 3 }), countryIndex.allSatisfy({ Int($0) < countryCount }),
            regionIndex.allSatisfy({ $0 == Self.noRegion || Int($0) < regionCount })
        else { throw reader.corrupt("a place's coordinates or references are out of range") }

        var index = 0
        func next(_ count: Int) throws(SpotError) -> [String] {
            var strings: [String] = []
            strings.reserveCapacity(count)
            for _ in 0..<count {
                let start = index == 0 ? 0 : Int(stringEnds[index - 1])
                let end = Int(stringEnds[index])
                guard start <= end, end <= stringBytes else { throw reader.corrupt("string table offsets out of order") }
                strings.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(stringStart + start)..<(stringStart + end)]), as: UTF8.self))
                index += 1
            }
            return strings
        }
        names = try next(placeCount)
        regionNames = try next(regionCount)
        countryNames = try next(countryCount)
        countryCodes = try next(countryCount)
    }

    /// Sequential little-endian reads with bounds checks.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let source: String
        var offset = 0

        func corrupt(_ what: String) -> SpotError {
            SpotError(.invalidContent, "geocoder data \(source) is corrupt: \(what)")
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(SpotError) -> T {
            guard bytes.count - offset >= MemoryLayout<T>.size else { throw corrupt("truncated") }
            defer { offset += MemoryLayout<T>.size }
            return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }

        /// `count` values, then skips to the next multiple of 8.
        mutating func array<T: FixedWidthInteger>(_: T.Type, count: Int) throws(SpotError) -> [T] {
            let size = count * MemoryLayout<T>.stride
            guard count >= 0, bytes.count - offset >= size else { throw corrupt("truncated") }
            let source = bytes.baseAddress! + offset
            var values = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(start: source, count: size))
                initialized = count
            }
            if 1.littleEndian != 1 {
                values = values.map { T(littleEndian: $0) }
            }
            offset += size
            offset = (offset + 7) & ~7
            return values
        }
    }
}
