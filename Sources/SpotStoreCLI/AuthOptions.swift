import ArgumentParser
import IdentityTokens
import Logging
import SpotCore

/// `serve`'s sign-in options: the identity providers whose ID tokens are accepted besides
/// SpotStore's own tokens.
struct AuthOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Accept Firebase Auth ID tokens of this project (issuer https://securetoken.google.com/ID, audience ID, Google's keys).", valueName: "id"))
    var firebaseProject: String?

    @Option(help: ArgumentHelp("Where the Firebase keys are instead of Google's URL: another URL, or a file (Google's x509 JSON or a JWKS) to work offline.", valueName: "url|file"))
    var firebaseKeys: String?

    @Option(help: ArgumentHelp("Accept ID tokens of this OpenID Connect issuer (exact `iss`); needs --auth-audience and --auth-keys.", valueName: "url"))
    var authIssuer: String?

    @Option(help: ArgumentHelp("The audience (`aud`) those tokens must carry, usually the app's client id.", valueName: "aud"))
    var authAudience: String?

    @Option(help: ArgumentHelp("The issuer's public keys: its JWKS URL (jwks_uri), or a file holding the JWKS.", valueName: "url|file"))
    var authKeys: String?

    @Option(help: ArgumentHelp(#"A JSON file of several providers: {"providers": [{"name", "issuer", "audience", "keys"}]}."#, valueName: "file"))
    var authConfig: String?

    @Flag(help: "Also accept unsigned tokens (alg none) as the Firebase Auth emulator issues them; only on a loopback --host, and then only requests to a loopback Host name are answered.")
    var authEmulator = false

    /// The providers the options name; empty when none is.
    func providers() throws -> [IdentityProvider] {
        var providers: [IdentityProvider] = []
        if let firebaseProject { providers.append(.firebase(project: firebaseProject, keys: firebaseKeys)) }
        if let authIssuer, let authAudience, let authKeys {
            providers.append(IdentityProvider(name: authIssuer, issuer: authIssuer, audience: authAudience, keys: authKeys))
        }
        if let authConfig { providers += try IdentityProvider.providers(configFile: authConfig) }
        if !providers.isEmpty { try IdentityProvider.validate(providers) }
        return providers
    }

    /// - Parameter exposed: whether the server is reached through a proxy or a public URL.
    func validate(host: String, exposed: Bool) throws {
        let issuerOptions = [authIssuer, authAudience, authKeys].compactMap { $0 }
        guard issuerOptions.isEmpty || issuerOptions.count == 3 else {
            throw ValidationError("--auth-issuer, --auth-audience and --auth-keys go together")
        }
        if firebaseKeys != nil && firebaseProject == nil { throw ValidationError("--firebase-keys goes with --firebase-project") }
        if authEmulator {
            guard ["127.0.0.1", "::1", "localhost"].contains(host), !exposed else {
                throw ValidationError("--auth-emulator accepts unsigned tokens: it is allowed only with a loopback --host (127.0.0.1, ::1 or localhost), not \(host), and without --trusted-proxy or --public-url")
            }
            guard firebaseProject != nil || authIssuer != nil || authConfig != nil else {
                throw ValidationError("--auth-emulator needs the provider whose tokens the emulator issues: --firebase-project ID")
            }
        }
    }

    /// The verifier of the configured providers' ID tokens, or `nil` when there are none.
    func verifier(logger: Logger) throws -> IDTokenVerifier? {
        let providers = try providers()
        guard !providers.isEmpty else { return nil }
        for provider in providers {
            logger.notice("accepting ID tokens", metadata: ["provider": "\(provider.name)", "issuer": "\(provider.issuer)", "keys": "\(provider.keys)"])
        }
        if authEmulator { logger.warning("--auth-emulator: unsigned ID tokens are accepted; never use this in production") }
        return try IDTokenVerifier(providers: providers, acceptsUnsigned: authEmulator, logger: logger)
    }
}
