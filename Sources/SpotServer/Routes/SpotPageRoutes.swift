import Foundation
import Hummingbird
import Mustache
import NIOCore
import SpotAPI
import SpotCore
import SpotService

/// `/s/{bucket}/{spotId}`: a spot's page, made on the server (no script), for anyone the
/// rules let list the spot, or anyone holding a share link (`?share=`). Its photos come
/// through `/s/{bucket}/{spotId}/photo/{name}`, under the same link, GPS-free where the spot
/// hides positions. Everything else is a 404 that does not say whether the spot exists.
struct SpotPageRoutes: ServiceRoutes {
    let service: StorageService
    let limiter: FailedAuthenticationLimiter
    let addressing: ClientAddressing

    /// The page's template and the one of a page not found, from the package's resources.
    static let (spotTemplate, missingTemplate) = (template("spot"), template("missing"))

    private static func template(_ name: String) -> Result<MustacheTemplate, any Error> {
        Result {
            guard let url = Bundle.module.url(forResource: name, withExtension: "mustache", subdirectory: "Templates") else {
                throw SpotError(.internal, "a spot page template is missing from the installation (Templates/\(name).mustache)")
            }
            return try MustacheTemplate(string: try String(contentsOf: url, encoding: .utf8))
        }
    }

    /// What a page may load and do: its images and the console's style sheet, nothing else;
    /// never framed, no forms, no referrer (a share link's secret stays in the page).
    static let pageHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'none'; img-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        .xFrameOptions: "DENY",
        .referrerPolicy: "no-referrer",
    ]

    /// The thumbnail size the page shows; its cover (OpenGraph image) is the larger one when there is one.
    static let (thumbnailSize, coverSize) = (256, 1024)

    /// `GET /s/{bucket}/{spotId}[?share=SECRET]`: the page, `text/html`; a page saying why
    /// when there is none to show (404).
    @Sendable func page(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let bucket = try bucket(context), spotId = try decodedParameter("spot", as: "spot id", context)
        let secret = request.uri.queryParameters.get("share")
        let spot: SpotDetails
        do {
            spot = try await service.spotPage(bucket: bucket, id: spotId, share: secret)
        } catch let error as SpotError where error.kind == .notFound {
            return try html(Self.missingTemplate.get().render(["message": error.message]), status: .notFound, cacheControl: "no-store")
        }
        let base = baseURL(request, context)
        func photoURL(_ object: StoredObject, size: Int?) -> String {
            let inSpot = object.path.name.dropFirst(spot.id.count + 1)
            var query = size.map { ["size=\($0)"] } ?? []
            if let secret { query.append("share=\(ObjectPath.urlSegment(secret))") }
            return "/s/\(ObjectPath.urlSegment(bucket))/\(ObjectPath.urlSegment(spot.id))/photo/"
                + inSpot.split(separator: "/", omittingEmptySubsequences: false).map { ObjectPath.urlSegment(String($0)) }.joined(separator: "/")
                + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        }
        let photos = spot.objects.compactMap { object -> [String: Any]? in
            guard let thumbnail = object.thumbnails.first(where: { $0.size == Self.thumbnailSize && !$0.isWebP }) else { return nil }
            return [
                "thumb": photoURL(object, size: Self.thumbnailSize), "full": photoURL(object, size: nil), "alt": object.path.fileName,
                "width": thumbnail.width, "height": thumbnail.height,
            ]
        }
        let cover = spot.objects.lazy.compactMap { object -> [String: Any]? in
            guard let thumbnail = object.thumbnails.first(where: { $0.size == Self.coverSize && !$0.isWebP })
                ?? object.thumbnails.first(where: { $0.size == Self.thumbnailSize && !$0.isWebP })
            else { return nil }
            return ["url": base + photoURL(object, size: thumbnail.size), "width": thumbnail.width, "height": thumbnail.height, "alt": object.path.fileName]
        }.first
        let title = spot.name ?? spot.id
        let place = [spot.place?.city, spot.place?.country].compactMap { $0 }.joined(separator: ", ")
        // The photos shown, when the page lists every object of the spot; else how many files it holds.
        let count = spot.objects.count < spot.objectCount ? "\(spot.objectCount) files" : photos.count == 1 ? "1 photo" : "\(photos.count) photos"
        var values: [String: Any] = [
            "title": title, "summary": spot.description ?? (place.isEmpty ? count : "\(count) in \(place)"),
            "pageURL": SpotShareResource.pageURL(bucket: bucket, spotId: spot.id, secret: secret, baseURL: base),
            "photos": photos, "hasPhotos": !photos.isEmpty, "count": count, "privateLink": secret != nil,
        ]
        values["cover"] = cover
        values["place"] = place.isEmpty ? nil : place
        values["description"] = spot.description
        return try html(Self.spotTemplate.get().render(values), status: .ok, cacheControl: secret == nil ? "no-cache" : "private, no-cache")
    }

    /// A page's answer, with `pageHeaders`.
    private func html(_ page: String, status: HTTPResponse.Status, cacheControl: String) -> Response {
        var headers = Self.pageHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = cacheControl
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// `GET /s/{bucket}/{spotId}/photo/{name}[?size=256|1024][&share=SECRET]`: a photo the
    /// page shows (its thumbnail with `size`), as `page` allows; anything else is a 404.
    @Sendable func photo(_ request: Request, context: SpotRequestContext) async throws -> Response {
        let bucket = try bucket(context), spotId = try decodedParameter("spot", as: "spot id", context)
        // "", "s", bucket, spot, "photo/{name}"
        let parts = request.uri.path.split(separator: "/", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, parts[4].hasPrefix("photo/"), let rest = PercentDecoding.decode(parts[4].dropFirst("photo/".count)) else {
            throw SpotError(.badRequest, "the photo's name in the URL is not valid percent-encoded UTF-8")
        }
        let path = try ObjectPath(bucket: bucket, name: "\(spotId)/\(rest)")
        guard path.topFolder == spotId else { throw SpotError(.notFound, "there is no photo \(rest) in spot \(spotId)") }
        let parameters = request.uri.queryParameters
        let secret = parameters.get("share")
        guard let sizeText = parameters.get("size") else {
            var response = try await media(try await service.spotPageDownload(at: path, share: secret), at: path, request: request)
            // A link's photo is for whoever holds the link, never for a shared cache.
            if secret != nil { response.headers[.cacheControl] = "private, max-age=3600" }
            return response
        }
        guard let size = Int(sizeText), [Self.thumbnailSize, Self.coverSize].contains(size) else {
            throw SpotError(.badRequest, "size must be \(Self.thumbnailSize) or \(Self.coverSize)")
        }
        let thumbnail = try await service.spotPageThumbnail(of: path, size: size, webP: false, share: secret)
        let (headers, answer) = try await thumbnailAnswer(
            thumbnail, of: path, request: request, cacheControl: secret == nil ? "public, max-age=3600" : "private, max-age=3600")
        return Response(status: answer.status, headers: headers, body: answer.body.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody())
    }
}
