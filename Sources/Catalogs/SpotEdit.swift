import Foundation
import SpotCore

/// `SpotChanges` checked and trimmed, independent of the backend: for each field, `nil`
/// leaves it as it is, `.some(nil)` clears it, `.some(value)` sets it.
struct SpotEdit: Sendable, Equatable {
    /// The most characters a spot's name may have.
    static let maxNameLength = 200
    /// The most characters a spot's description may have.
    static let maxDescriptionLength = 2000
    /// The most characters a city override may have.
    static let maxCityLength = 200

    let name: String??
    let description: String??
    let cityOverride: String??
    let hidesLocation: Bool?

    /// Trims white space (newlines too) around each field; what is empty then clears the field.
    /// - Throws: `SpotError(.badRequest)` when a trimmed name or city has more than 200
    ///   characters, or a description more than 2000.
    init(_ changes: SpotChanges) throws(SpotError) {
        name = try Self.checked(changes.name, "name", maxLength: Self.maxNameLength)
        description = try Self.checked(changes.description, "description", maxLength: Self.maxDescriptionLength)
        cityOverride = try Self.checked(changes.city, "city", maxLength: Self.maxCityLength)
        hidesLocation = changes.hidesLocation
    }

    /// Applies the edit to the owner's fields of `spot` and brings its city key up to date.
    func apply(to spot: inout SpotRecord) {
        if let name { spot.name = name }
        if let description { spot.description = description }
        if let cityOverride { spot.cityOverride = cityOverride }
        if let hidesLocation { spot.hidesLocation = hidesLocation }
        spot.updateCityKey()
    }

    private static func checked(_ value: String?, _ field: String, maxLength: Int) throws(SpotError) -> String?? {
        guard let value else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= maxLength else {
            throw SpotError(.badRequest, "the spot's \(field) has \(trimmed.count) characters; at most \(maxLength) are allowed")
        }
        return .some(trimmed.isEmpty ? nil : trimmed)
    }
}
