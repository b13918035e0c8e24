import ArgumentParser

/// `spotstore`: the SpotStore service and its command-line client.
@main
struct SpotStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spotstore",
        abstract: "Self-hosted photo storage for spots: serve it, and talk to it.",
        discussion: """
            Start the service with `spotstore serve`, create a user with `spotstore users add UID`, \
            then upload with `spotstore upload FILE… --to spots/SPOT --token TOKEN`.
            Client commands read SPOTSTORE_SERVER and SPOTSTORE_TOKEN from the environment.
            """,
        subcommands: [
            Serve.self, Users.self, Rules.self, Upload.self, IngestCommand.self, Get.self, List.self, Remove.self, SignedURL.self, DownloadTokens.self,
            Spots.self, Share.self, Geocode.self, Thumbnail.self, Fsck.self, GC.self, Restore.self, Stats.self, Migrate.self,
        ]
    )
}

/// Where the local store lives (server side and admin commands).
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store's data directory.", valueName: "dir"))
    var store: String = "./storage"

    @Option(name: .customLong("tmp"), help: ArgumentHelp(
        "This process's own temp directory, emptied at start (default: a new one under STORE/tmp, removed once the process is gone). Give each process its own.",
        valueName: "dir"))
    var temporaryDirectory: String?

    @OptionGroup var backendOptions: BackendOptions

    var layout: StoreLayout { StoreLayout(root: store, temporaryDirectory: temporaryDirectory, backends: backendOptions.backends) }
}
