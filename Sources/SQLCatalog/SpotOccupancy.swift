import SpotCore

// How both catalog backends count a spot's places when admitting an object or an upload
// session into it, so that the SQLite and PostgreSQL catalogs agree.

/// What a spot holds as admission counts it for one name: its owner (`nil` when it has no
/// row yet), its objects, and the places its live upload sessions hold. A backend counts
/// `sessions` as the distinct names in the spot, other than the name being admitted, that
/// some session expiring after now is uploading and no object has: a session replacing an
/// object holds no place, and sessions uploading one new name hold one. Where the admission
/// requires ownership, only the admitted uploader's own sessions count (`counted`): another
/// user's sessions could never commit into a spot the uploader owns, so they cannot hold an
/// unclaimed spot's places against its first uploader.
package struct SpotOccupancy: Sendable, Equatable {
    package var bucket: String
    package var id: String
    package var owner: String?
    package var objects: Int
    package var sessions: Int

    package init(bucket: String, id: String, owner: String?, objects: Int, sessions: Int) {
        self.bucket = bucket
        self.id = id
        self.owner = owner
        self.objects = objects
        self.sessions = sessions
    }

    /// Whose sessions count when `uploader` is admitted under `admission`: only theirs when
    /// the admission requires ownership, everyone's (`nil`) otherwise.
    package static func counted(_ uploader: String, _ admission: SpotAdmission) -> String? {
        admission.requiresOwnership ? uploader : nil
    }

    /// Why the spot refuses a new object (or session) of `committer` under `admission`, or
    /// `nil`. Objects and sessions' places both count. A spot without a row is owned by
    /// nobody yet, so ownership cannot refuse, and counts only its sessions' places.
    package func refusal(of committer: String, admission: SpotAdmission, isReplacement: Bool) -> SpotError? {
        let state = if let owner {
            SpotState(bucket: bucket, id: id, owner: owner, objectCount: objects + sessions)
        } else {
            SpotState(bucket: bucket, id: id, owner: committer, objectCount: sessions)
        }
        return admission.refusal(of: committer, into: state, isReplacement: isReplacement)
    }
}
