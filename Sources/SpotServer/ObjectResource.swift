import Foundation
import SpotCore

/// An object's metadata as the API shows it (Firebase Storage's field names, plus photo
/// and thumbnail fields).
struct ObjectResource: Encodable {
    struct Photo: Encodable {
        struct Camera: Encodable {
            let make: String?
            let model: String?
        }
        let width: Int
        let height: Int
        let orientation: Int
        let takenAt: String?
        let camera: Camera?
        let location: GeoPoint?
    }

    let name: String
    let bucket: String
    let size: Int64
    let contentType: String
    let sha256: String
    let owner: String
    let timeCreated: Date
    let updated: Date
    let downloadUrl: String
    let photo: Photo?
    let thumbnails: [String: String]?

    /// - Parameter baseURL: `http://host:port`, with no trailing slash.
    init(_ object: StoredObject, baseURL: String) {
        let objectURL = "\(baseURL)/v0/b/\(object.path.bucket)/o/\(ObjectPath.urlSegment(object.path.name))"
        name = object.path.name
        bucket = object.path.bucket
        size = object.size
        contentType = object.contentType
        sha256 = object.digest.hex
        owner = object.owner
        timeCreated = object.createdAt
        updated = object.updatedAt
        downloadUrl = "\(objectURL)?alt=media"
        photo = object.photo.map { photo in
            Photo(
                width: photo.width, height: photo.height, orientation: photo.orientation, takenAt: photo.takenAt,
                camera: photo.cameraMake == nil && photo.cameraModel == nil ? nil : .init(make: photo.cameraMake, model: photo.cameraModel),
                location: photo.location)
        }
        thumbnails = object.thumbnails.isEmpty ? nil : Dictionary(
            uniqueKeysWithValues: object.thumbnails.map { (String($0.size), "\(objectURL)?alt=thumbnail&size=\($0.size)") })
    }
}

/// A listing page: `{prefixes, items, nextPageToken}`.
struct ListResource: Encodable {
    let prefixes: [String]
    let items: [ObjectResource]
    let nextPageToken: String?
}
