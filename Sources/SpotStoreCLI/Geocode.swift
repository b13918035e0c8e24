import ArgumentParser
import Foundation
import Geocoder
import SpotCore

extension SpotStoreCommand {
    /// `spotstore geocode LAT LON`: the offline reverse geocoder on the command line.
    struct Geocode: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Name the place at a latitude and longitude, offline (bundled GeoNames data).",
            discussion: """
                With LAT LON, prints one line: city, region, country (code), distance to the city's centre.                 `spotstore geocode 48.8584 2.2945` prints `Paris, Île-de-France, France (FR), 4.0 km`.
                Without them, reads one `lat,lon` per line from standard input and prints one line for \
                each, in order. A line starting with `-` has no city (open sea, remote land): \
                `-, Lisbon, Portugal (PT)` gives the region and country of the nearest place within \
                100 km, `-` alone means nothing is that near. An unreadable or invalid input line (NaN, \
                |lat| > 90, |lon| > 180, the 0,0 that broken cameras write) prints an empty line and an \
                error on standard error, and the exit status is non-zero at the end.
                The city is the one a person would write on a postcard: a populous city claims the \
                points within a radius that grows with its population, before its own neighbourhoods \
                and suburbs do (--explain shows which rule decided).
                --benchmark FILE reads `lat,lon` lines from FILE first, then times the lookups on one \
                thread and prints load time, lookups/s and peak resident memory (also as a JSON line).
                Data: GeoNames (geonames.org), CC BY 4.0.
                """)

        @Argument(
            parsing: .allUnrecognized,
            help: ArgumentHelp("Latitude and longitude in decimal degrees (or one `lat,lon`); none: read standard input.", valueName: "lat lon"))
        var position: [String] = []

        /// The position's text as one `lat,lon` (a `--` separator is allowed before it).
        private var positionText: String { position.filter { $0 != "--" }.joined(separator: ",") }

        @Flag(help: "Print JSON (one object per line) instead of text.")
        var json = false

        @Flag(help: "Also say which step of the postcard rule chose the answer.")
        var explain = false

        @Option(help: ArgumentHelp("Time lookups of every `lat,lon` line of this file (one thread) and print the figures.", valueName: "file"))
        var benchmark: String?

        func validate() throws {
            if benchmark != nil, !position.isEmpty { throw ValidationError("--benchmark takes no position") }
            guard !position.isEmpty else { return }
            guard let (latitude, longitude) = try? coordinates(of: positionText) else {
                throw ValidationError("expected LAT LON (decimal degrees), e.g. `spotstore geocode 48.8584 2.2945`; got '\(position.joined(separator: " "))'")
            }
            guard GeoPoint(latitude: latitude, longitude: longitude).isValidPosition else {
                throw ValidationError("\(latitude), \(longitude) is not a position (out of range, or the 0,0 broken cameras write)")
            }
        }

        func run() throws {
            if let benchmark {
                try runBenchmark(file: benchmark)
                return
            }
            let geocoder = try OfflineGeocoder.bundled()
            if !position.isEmpty {
                let (latitude, longitude) = try coordinates(of: positionText)
                print(describe(geocoder, latitude, longitude) ?? "")
                return
            }
            var failures = 0
            var number = 0
            var output = ""
            while let line = readLine() {
                number += 1
                if let (latitude, longitude) = try? coordinates(of: line), let text = describe(geocoder, latitude, longitude) {
                    output += text
                } else {
                    failures += 1
                    printError("line \(number): not a position: '\(line)' (expected `lat,lon` in decimal degrees, not 0,0)")
                }
                output += "\n"
                if output.utf8.count > 1 << 16 {
                    FileHandle.standardOutput.write(Data(output.utf8))
                    output = ""
                }
            }
            FileHandle.standardOutput.write(Data(output.utf8))
            if failures > 0 {
                printError("\(failures) of \(number) lines were not positions")
                throw ExitCode.failure
            }
        }

        /// One output line for a position; `nil` for an invalid one.
        private func describe(_ geocoder: OfflineGeocoder, _ latitude: Double, _ longitude: Double) -> String? {
            guard let match = geocoder.match(latitude: latitude, longitude: longitude),
                let place = geocoder.place(latitude: latitude, longitude: longitude)
            else { return nil }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                var object = (try? JSONSerialization.jsonObject(with: encoder.encode(place))) as? [String: Any] ?? [:]
                object["latitude"] = latitude
                object["longitude"] = longitude
                if explain { object["rule"] = ruleText(match) }
                let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
                return String(decoding: data, as: UTF8.self)
            }
            var parts = [place.city ?? "-"]
            if let region = place.region { parts.append(region) }
            if let country = place.country, let code = place.countryCode { parts.append("\(country) (\(code))") }
            if let km = place.distanceKm { parts.append(String(format: "%.1f km", km)) }
            var line = parts.joined(separator: ", ")
            if explain { line += " [\(ruleText(match))]" }
            return line
        }

        private func ruleText(_ match: PlaceMatch) -> String {
            switch match.reason {
            case .claimed(let band, let radius):
                return String(format: "claimed: nearest claiming place of the %@+ band, inside its %.1f km radius", grouped(band), radius)
            case .nearest: return "nearest place: no claim radius covers this point"
            case .countryOnly: return "no place within the city radius; country of the nearest place"
            case .remote: return "no place within the country radius"
            }
        }

        private func runBenchmark(file: String) throws {
            // Read and parse the points first, a megabyte at a time (the text is never all in memory).
            guard let handle = FileHandle(forReadingAtPath: file) else { throw ValidationError("cannot read \(file)") }
            defer { try? handle.close() }
            var latitudes: [Double] = []
            var longitudes: [Double] = []
            let estimate = Int((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0) / 16
            latitudes.reserveCapacity(estimate)  // untouched capacity is not resident
            longitudes.reserveCapacity(estimate)
            var number = 0
            var pending: [UInt8] = []
            func parse(_ line: some Collection<UInt8>) throws {
                number += 1
                let text = String(decoding: line, as: UTF8.self)
                if text.allSatisfy(\.isWhitespace) { return }
                guard let (latitude, longitude) = try? coordinates(of: text) else {
                    throw ValidationError("\(file):\(number): expected `lat,lon`, got '\(text)'")
                }
                latitudes.append(latitude)
                longitudes.append(longitude)
            }
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                pending.append(contentsOf: chunk)
                var start = 0
                while let end = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    try parse(pending[start..<end])
                    start = end + 1
                }
                pending.removeFirst(start)
            }
            if !pending.isEmpty { try parse(pending) }
            let loadStart = DispatchTime.now().uptimeNanoseconds
            let geocoder = try OfflineGeocoder.bundled()
            let loadNanoseconds = DispatchTime.now().uptimeNanoseconds - loadStart
            var withCity = 0
            var kilometres = 0.0
            let start = DispatchTime.now().uptimeNanoseconds
            for i in 0..<latitudes.count {
                if let place = geocoder.place(latitude: latitudes[i], longitude: longitudes[i]), place.city != nil {
                    withCity += 1
                    kilometres += place.distanceKm ?? 0
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let loadMs = Double(loadNanoseconds) / 1e6
            let perSecond = Double(latitudes.count) / seconds
            let rssMB = Double(peakResidentKilobytes() ?? 0) / 1024
            print(String(format: "load %.1f ms (%d places)", loadMs, geocoder.placeCount))
            print("\(grouped(latitudes.count)) lookups in \(String(format: "%.3f", seconds)) s on one thread: \(grouped(Int(perSecond))) lookups/s")
            print(String(format: "with a city: %d (mean distance %.1f km)", withCity, withCity > 0 ? kilometres / Double(withCity) : 0))
            print(String(format: "peak RSS %.1f MB (VmHWM)", rssMB))
            print(String(format: #"{"load_ms": %.3f, "lookups": %d, "lookups_per_s": %.0f, "rss_mb": %.1f, "with_city": %d}"#, loadMs, latitudes.count, perSecond, rssMB, withCity))
        }

        /// The process's peak resident set (VmHWM in /proc/self/status), kB; `nil` where there is none.
        private func peakResidentKilobytes() -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
            else { return nil }
            return Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
    }
}

/// 1234567 as "1,234,567" (without Foundation's formatters, which load ICU data: megabytes of RSS).
private func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    let groups = stride(from: digits.count, to: 0, by: -3).reversed().map { end in
        String(digits[digits.index(digits.startIndex, offsetBy: max(0, end - 3))..<digits.index(digits.startIndex, offsetBy: end)])
    }
    return (number < 0 ? "-" : "") + groups.joined(separator: ",")
}

/// `lat,lon` (spaces allowed) as two finite numbers.
private func coordinates(of text: String) throws -> (Double, Double) {
    let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]) else {
        throw ValidationError("expected `lat,lon`, got '\(text)'")
    }
    return (latitude, longitude)
}
