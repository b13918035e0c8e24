import Foundation

extension FileManager {
    /// Removes everything inside `directory` (not the directory itself) and returns how
    /// many entries that was.
    @discardableResult
    public func removeContents(ofDirectory directory: String) throws -> Int {
        let names = try contentsOfDirectory(atPath: directory)
        for name in names {
            try removeItem(atPath: "\(directory)/\(name)")
        }
        return names.count
    }
}
