import ArgumentParser
import Foundation
import SpotAPI

extension SpotStoreCommand {
    /// `spotstore spots --city NAME` / `--near LAT,LON --radius KM`.
    struct Spots: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find spots by city or near a point (all pages).",
            discussion: "City matching ignores case and accents: --city \"sao paulo\" finds São Paulo. --near lists the nearest first.")

        @OptionGroup var client: ClientOptions

        @Option(help: "The bucket to search.")
        var bucket: String = "spots"

        @Option(help: ArgumentHelp("Spots in this city.", valueName: "name"))
        var city: String?

        @Option(help: ArgumentHelp("Spots near this point, in decimal degrees.", valueName: "lat,lon"))
        var near: String?

        @Option(help: ArgumentHelp("Search radius for --near, in km.", valueName: "km"))
        var radius: Double = 10

        @Flag(help: "Print the API's JSON pages instead of one line per spot.")
        var json = false

        func validate() throws {
            guard (city == nil) != (near == nil) else { throw ValidationError("give exactly one of --city NAME or --near LAT,LON") }
            guard radius > 0 else { throw ValidationError("--radius must be more than 0 km") }
        }

        func run() async throws {
            let api = try client.client()
            var pageToken: String?
            repeat {
                var items = city.map { [URLQueryItem(name: "city", value: $0)] }
                    ?? [URLQueryItem(name: "near", value: near), URLQueryItem(name: "radiusKm", value: String(radius))]
                if let pageToken { items.append(URLQueryItem(name: "pageToken", value: pageToken)) }
                var components = URLComponents()
                components.queryItems = items
                let url = "\(api.baseURL)/v0/b/\(bucket)/spots?\(components.percentEncodedQuery ?? "")"
                let response = try await api.send(.GET, url)
                let bytes = Data(buffer: try await response.body.collect(upTo: 64 << 20))
                if json { print(String(decoding: bytes, as: UTF8.self)) }
                let page = try APIJSON.decoder().decode(SpotPageResource.self, from: bytes)
                if !json {
                    for spot in page.spots { print(Self.line(spot)) }
                }
                pageToken = page.nextPageToken
            } while pageToken != nil
        }

        /// `spots/eiffel  "Eiffel Tower"  Paris  48.85840,2.29450  4 photos  0.12 km`
        static func line(_ spot: SpotResource) -> String {
            var fields = ["\(spot.bucket)/\(spot.id)", spot.name.map { "\"\($0)\"" } ?? "-", spot.city ?? "-"]
            fields.append(spot.location.flatMap { location in
                location.latitude.flatMap { latitude in location.longitude.map { String(format: "%.5f,%.5f", latitude, $0) } }
            } ?? "-")
            fields.append("\(spot.photoCount) photo\(spot.photoCount == 1 ? "" : "s")")
            if let distanceKm = spot.distanceKm { fields.append(String(format: "%.2f km", distanceKm)) }
            return fields.joined(separator: "\t")
        }
    }
}
