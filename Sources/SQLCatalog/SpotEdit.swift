import Foundation
import SpotCore

/// `SpotChanges` checked and trimmed, independent of the backend: for each field, `nil`
/// leaves it as it is, `.some(nil)` clears it, `.some(value)` sets it.
package struct SpotEdit: Sendable, Equatable {
    /// The most characters a spot's name may have.
    package static let maxNameLength = 200
    /// The most characters a spot's description may have.
    package static let maxDescriptionLength = 2000
    /// The most characters a city override may have.
    package static let maxCityLength = 200

    package let name: String??
    package let description: String??
    package let cityOverride: String??
    package let hidesLocation: Bool?

    /// Trims white space (newlines too) around each field; what is empty then clears the field.
    /// - Throws: `SpotError(.badRequest)` when a trimmed name or city has more than 200
    ///   characters, or a description more than 2000; or when a field holds a control
    ///   character (a description may hold line feeds and tabs) or a bidirectional override
    ///   (`UnicodeIdentity.problem(inText:lineBreaks:)`).
    package init(_ changes: SpotChanges) throws(SpotError) {
        name = try Self.checked(changes.name, "name", maxLength: Self.maxNameLength, lineBreaks: false)
        description = try Self.checked(changes.description, "description", maxLength: Self.maxDescriptionLength, lineBreaks: true)
        cityOverride = try Self.checked(changes.city, "city", maxLength: Self.maxCityLength, lineBreaks: false)
        hidesLocation = changes.hidesLocation
    }

    private static func checked(_ value: String?, _ field: String, maxLength: Int, lineBreaks: Bool) throws(SpotError) -> String?? {
        guard let value else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= maxLength else {
            throw SpotError(.badRequest, "the spot's \(field) has \(trimmed.count) characters; at most \(maxLength) are allowed")
        }
        if let problem = UnicodeIdentity.problem(inText: trimmed, lineBreaks: lineBreaks) {
            throw SpotError(.badRequest, "the spot's \(field) cannot be shown as it is: \(problem)")
        }
        return .some(trimmed.isEmpty ? nil : trimmed)
    }
}
