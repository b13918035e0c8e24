import Foundation
import Testing

@testable import Media

/// Positions outside the Exif GPS IFD: XMP under any namespace and Photoshop resources,
/// written into copies of fixtures with exiftool and looked for with exiftool afterwards.
extension LocationStripperTests {
    /// A position that no fixture holds, in the forms XMP writers use.
    static let latitude = "47.123456", longitude = "8.654321", altitude = "1234.56"

    /// XMP with W3C `geo:` and DJI's `drone-dji:` positions: no tag mentions "GPS".
    static let geoAndDronePacket = xmpPacket("""
        xmlns:geo='http://www.w3.org/2003/01/geo/wgs84_pos#' xmlns:drone-dji='http://www.dji.com/drone-dji/1.0/' \
        geo:lat='\(latitude)' geo:long='\(longitude)' drone-dji:Latitude='\(latitude)' \
        drone-dji:Longitude='\(longitude)' drone-dji:AbsoluteAltitude='+\(altitude)'
        """)

    /// XMP with `exif:GPSLatitude`/`GPSLongitude` and an IPTC Extension `LocationShown` with GPS.
    static let gpsAndIPTCPacket = xmpPacket("""
        xmlns:exif='http://ns.adobe.com/exif/1.0/' xmlns:Iptc4xmpExt='http://iptc.org/std/Iptc4xmpExt/2008-02-29/' \
        exif:GPSLatitude='47,7.40736N' exif:GPSLongitude='8,39.25926E'><Iptc4xmpExt:LocationShown><rdf:Bag><rdf:li \
        Iptc4xmpExt:City='Zurich' Iptc4xmpExt:GPSLatitude='\(latitude)' Iptc4xmpExt:GPSLongitude='\(longitude)' \
        Iptc4xmpExt:GPSAltitude='\(altitude)'/></rdf:Bag></Iptc4xmpExt:LocationShown></rdf:Description
        """)

    static func xmpPacket(_ attributes: String) -> String {
        """
        <?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?><x:xmpmeta xmlns:x='adobe:ns:meta/'>\
        <rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><rdf:Description rdf:about='' \
        \(attributes)/></rdf:RDF></x:xmpmeta><?xpacket end='w'?>
        """
    }

    /// One fixture of every format the stripper handles.
    static let formats = ["photos/chelsea.jpg", "alpha.png", "heif/arrow.heic", "heif/abc_color_irot_alpha_irot.avif", "heif/test.webp"]

    /// Each copy of `path` carries a position exiftool reads; after stripping, exiftool reads
    /// none, the bytes hold none of its numbers, and the image data is the same.
    @Test(arguments: formats)
    func noPositionSurvivesInXMPOrPhotoshopResources(_ path: String) throws {
        let fixture = try Fixtures.bytes(path)
        let ext = (path as NSString).pathExtension
        var copies = try [Self.geoAndDronePacket, Self.gpsAndIPTCPacket].map { try Self.writingXMP($0, into: fixture, ext: ext) }
        switch ext {
        case "jpg": copies.append(try jpegWithPhotoshopResources(fixture))
        case "png": copies.append(try pngWithPhotoshopProfile(fixture))
        default: break
        }
        for carrying in copies {
            #expect(try !Self.positions(in: carrying, ext: ext).isEmpty, "the copy carries a position")
            let stripped = try strip(carrying)
            #expect(try Self.positions(in: stripped, ext: ext).isEmpty)
            for number in [Self.latitude, Self.longitude, Self.altitude] {
                #expect(stripped.firstRange(of: Array(number.utf8)) == nil, "\(number) is still in the file")
            }
            try expectSameImage(stripped, carrying, ext: ext)
        }
    }

    /// JPEG: everything from the first marker after the APPn segments on; PNG: the pixels;
    /// HEIF and WebP: the length, and no byte changed outside the XMP packet.
    func expectSameImage(_ stripped: [UInt8], _ original: [UInt8], ext: String) throws {
        switch ext {
        case "jpg":
            let start = try #require(imageDataStart(original))
            #expect(try stripped[#require(imageDataStart(stripped))...] == original[start...])
        case "png":
            #expect(try DecodedImage(png: stripped).pixels == DecodedImage(png: original).pixels)
        default:
            #expect(stripped.count == original.count)
            let begin = try #require(original.firstRange(of: Array("<?xpacket begin".utf8))).lowerBound
            let endTag = try #require(original[begin...].firstRange(of: Array("<?xpacket end".utf8)))
            let end = try #require(original[endTag.upperBound...].firstRange(of: Array("?>".utf8))).upperBound
            let changed = original.indices.filter { original[$0] != stripped[$0] }
            #expect(!changed.isEmpty && changed.allSatisfy { (begin..<end).contains($0) })
        }
    }

    /// `bytes` with an APP13 after SOI holding Photoshop resources: XMP (0x0424) with a
    /// `geo:` position and Exif (0x0422) with gps.jpg's GPS IFD.
    func jpegWithPhotoshopResources(_ bytes: [UInt8]) throws -> [UInt8] {
        let payload = Array("Photoshop 3.0\0".utf8) + (try Self.photoshopResources())
        return [0xFF, 0xD8, 0xFF, 0xED, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload + bytes[2...]
    }

    /// `bytes` with ImageMagick's `Raw profile type 8bim` text chunk after IHDR, holding the
    /// Photoshop resources of `jpegWithPhotoshopResources` as hex.
    func pngWithPhotoshopProfile(_ bytes: [UInt8]) throws -> [UInt8] {
        let resources = try Self.photoshopResources()
        let hex = resources.map { String(format: "%02x", $0) }.joined()
        let lines = stride(from: 0, to: hex.count, by: 72).map { hex.dropFirst($0).prefix(72) }.joined(separator: "\n")
        let text = "\n8bim\n" + String(format: "%8d", resources.count) + "\n" + lines + "\n"
        let afterIHDR = 8 + 25
        return Array(bytes[..<afterIHDR]) + pngChunk("tEXt", Array("Raw profile type 8bim\0\(text)".utf8)) + bytes[afterIHDR...]
    }

    /// Photoshop image resources: XMP (0x0424) and Exif (0x0422), each with a position.
    static func photoshopResources() throws -> [UInt8] {
        func resource(_ id: UInt16, _ data: [UInt8]) -> [UInt8] {
            Array("8BIM".utf8) + [UInt8(id >> 8), UInt8(id & 0xFF), 0, 0] + bytes(UInt32(data.count), bigEndian: true) + data
                + (data.count.isMultiple(of: 2) ? [] : [0])
        }
        let gpsJPEG = try Fixtures.bytes("gps.jpg")
        let segment = try #require(gpsJPEG.withUnsafeBufferPointer(ExifReader.exifSegment))
        return resource(0x0424, Array(geoAndDronePacket.utf8)) + resource(0x0422, Array(gpsJPEG[(segment.lowerBound + 6)..<segment.upperBound]))
    }

    /// A copy of `bytes` in which exiftool has written `packet` as the XMP.
    static func writingXMP(_ packet: String, into bytes: [UInt8], ext: String) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let image = directory.appendingPathComponent("image.\(ext)"), xmp = directory.appendingPathComponent("packet.xmp")
        try Data(bytes).write(to: image)
        try Data(packet.utf8).write(to: xmp)
        _ = try Fixtures.runExiftool(["-q", "-overwrite_original", "-xmp<=\(xmp.path)", image.path])
        return Array(try Data(contentsOf: image))
    }

    /// Every tag exiftool reads from `bytes` that names a position (GPS, latitude, longitude,
    /// altitude, `geo:lat`, `geo:long`) or holds one of the test position's numbers.
    static func positions(in bytes: [UInt8], ext: String) throws -> [String] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("positions-\(UUID().uuidString).\(ext)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let json = try Fixtures.runExiftool(["-j", "-a", "-G1", "-n", "-u", file.path])
        let tags = try #require(try JSONSerialization.jsonObject(with: json) as? [[String: Any]]).first ?? [:]
        return tags.compactMap { key, value in
            let name = key.split(separator: ":").last.map(String.init) ?? key
            let named = name.range(of: "gps|latitude|longitude|altitude|^lat$|^long$", options: [.regularExpression, .caseInsensitive]) != nil
            let text = "\(value)"
            let holds = [latitude, longitude, altitude].contains { text.contains($0) }
            return named || holds ? "\(key)=\(text)" : nil
        }
    }
}
