extension RulesPolicy {
    /// SpotStore's default rules, written to `storage/rules` on first start:
    /// `spots/{spotId}/{file}` is shared (signed-in users read, a spot's owner writes; 4
    /// JPEG/PNG objects of at most 6 MiB per spot), `users/{uid}/…` and `media/{uid}/…` are
    /// private to their user (10 MiB; 512 MiB without thumbnails), other buckets are closed.
    public static let defaultText = """
        rules_version = '2';

        // SpotStore access rules. `spotstore rules check` validates changes; the server reads
        // this file when it starts. Paths are /b/<bucket>/o/<object name>.
        service firebase.storage {
          function signedIn() {
            return request.auth != null;
          }

          // spots: shared photo spots. A spot is the folder directly under the bucket; its owner
          // is the user who created its first object (`spot` is null until then).
          match /b/spots/o {
            limit size: 6 MiB, objects: 4, types: ["image/jpeg", "image/png", "image/heic", "image/heif", "image/avif", "image/webp"];

            // Any signed-in user may list anywhere in the bucket, the root included.
            match /{path=**} {
              allow list: if signedIn();
            }

            // Objects live exactly one folder deep: spots/<spotId>/<file>.
            match /{spotId}/{file} {
              allow get: if signedIn();
              allow create: if signedIn() && (spot == null || spot.owner == request.auth.uid);
              allow update, delete: if signedIn() && spot != null && spot.owner == request.auth.uid;
            }
          }

          // users: private folders; only <uid> reads, lists and writes users/<uid>/….
          match /b/users/o/{uid}/{path=**} {
            allow read, write: if signedIn() && request.auth.uid == uid;
            limit size: 10 MiB;
          }

          // media: private folders for large files such as videos; no thumbnails.
          match /b/media/o/{uid}/{path=**} {
            allow read, write: if signedIn() && request.auth.uid == uid;
            limit size: 512 MiB, thumbnails: false;
          }

          // Any other bucket: no rule matches, so every request is denied.
        }

        """
}
