import Access
import Testing

@Suite struct RulesDiagnosticsTests {
    @Test func everyErrorIsReportedWithItsPosition() {
        let text = """
            rules_version = '2';
            service firebase.storage {
              function isOwner(uid) { return request.auth.uid == uid; }
              match /b/{bucket}/o {
                allow wirte: if true;
                allow read if true;
                allow get: if reqest.auth != null;
                allow get: if isOwner(bucket, 1);
                allow get: if 'a'.matches('(');
                limit maxsize: 5;
                limit size: 5 mb;
                match /{rest=**}/more { allow get; }
                match /{bucket} { allow get: if 'x'.lenght() == 1; }
                allow get: if 'unterminated;
                alow get;
                allow get: if resource.size > 1 allow list;
                function f() { return f(); }
                allow get: if timestamp.dat(1) == 1 || timestamp == 1;
              }
            }
            """
        let expected = [
            "bad.rules:5:11: unknown operation 'wirte'; use read, write, get, list, create, update or delete",
            "bad.rules:6:16: expected ':' before 'if'",
            "bad.rules:7:19: unknown name 'reqest'; did you mean 'request'?",
            "bad.rules:8:19: function 'isOwner' takes 1 argument, given 2",
            "bad.rules:9:31: invalid regular expression in matches(): expected ')'",
            "bad.rules:10:11: unknown limit 'maxsize'; limits are size, objects, types, thumbnails, downloadTokens",
            "bad.rules:11:19: unknown size unit 'mb'; use B, KB, MB, GB, KiB, MiB or GiB",
            "bad.rules:12:12: '{rest=**}' must be the last segment of a match path",
            "bad.rules:13:11: capture 'bucket' appears twice in nested match paths; rename one",
            "bad.rules:13:41: unknown method 'lenght'; methods are day, get, hasAll, hasAny, keys, lower, matches, month, size, split, toMillis, trim, upper, values, year",
            "bad.rules:14:19: unterminated string; close it with \"'\" on the same line",
            "bad.rules:15:5: expected 'match', 'allow', 'function' or 'limit', found 'alow'; did you mean 'allow'?",
            "bad.rules:16:37: expected ';' after the condition, found 'allow'",
            "bad.rules:17:27: function 'f' calls itself; recursion is not allowed",
            "bad.rules:18:29: unknown function 'timestamp.dat'; did you mean 'timestamp.date'?",
            "bad.rules:18:44: 'timestamp' is not a value; use timestamp.date(…) or timestamp.value(…)",
        ]
        let diagnostics = Fixtures.diagnostics(text)
        #expect(diagnostics.map(\.description) == expected)
        #expect(diagnostics.first == RulesDiagnostic(fileName: "bad.rules", line: 5, column: 11, message: String(expected[0].dropFirst(16))))
        #expect(RulesError(diagnostics: diagnostics).description == expected.joined(separator: "\n"))
    }

    @Test(arguments: [
        ("match /b/x/o {\n  allow get: true;\n}", "2:14: expected 'if' after ':', found 'true'"),
        ("match /b/x/o {\n  allow get;\n", "3:1: expected '}' to close the block opened at 1:14"),
        ("match /b/x/o { allow get; }\n}", "2:1: unexpected '}'; it closes no block"),
        ("match /b/x/o { allow get: if 1 is strin; }", "1:35: unknown type 'strin'; use string, int, float, number, bool, list, map, timestamp, duration"),
        ("service firebase.firestore { }", "1:1: unknown service 'firebase.firestore'; use 'service firebase.storage'"),
        ("rules_version = '1';", "1:17: unsupported rules_version '1'; use '2'"),
        ("allow read;", "1:1: 'allow' must be inside a 'match' block"),
        ("match /b//o { allow read; }", "1:10: empty segment in match path '/b//o'; remove the extra '/'"),
        ("match /b/{x=*} { allow read; }", "1:10: invalid path segment '{x=*}'; use {name} or {name=**}"),
        ("match b/x { allow read; }", "1:7: expected a path starting with '/' after 'match', found 'b'"),
        ("match /b/x/o/{p=**} { match /y { allow read; } }", "1:29: '{p=**}' must be the last segment of a match path; it is followed by this nested match"),
        ("match /b/{request}/o { allow read; }", "1:7: capture 'request' hides a built-in name; rename it"),
        ("match /b/x/o { limit size: 1 MiB, size: 2 MiB; }", "1:35: limit 'size' is set twice in one statement"),
        ("match /b/x/o { limit kinds: ['a', 'b'], size: 1 MiB; }", "1:22: unknown limit 'kinds'; limits are size, objects, types, thumbnails, downloadTokens"),
        ("service firebase.storage match /b/x/o { allow read; }", "1:26: expected '{' after 'service firebase.storage', found 'match'"),
        ("match /b/x/o { limit objects: 0; }", "1:31: 'objects' must be a positive whole number, found '0'"),
        ("match /b/x/o { limit types: 'image/png'; }", "1:29: expected '[' to start the list of content types, found string 'image/png'"),
        ("match /b/x/o { limit thumbnails: 1; }", "1:34: 'thumbnails' must be true or false, found '1'"),
        ("match /b/x/o { allow get: if true & false; }", "1:35: unexpected character '&'; did you mean '&&'?"),
        ("match /b/x/o { allow get: if 99999999999999999999 > 1; }", "1:30: integer 99999999999999999999 is too large; the largest is 9223372036854775807"),
        ("match /b/x/o { allow get; } /* never closed", "1:29: unterminated comment; close it with '*/'"),
        ("match /b/x/o { allow get: if isOwner(); }", "1:30: unknown function 'isOwner'"),
        ("function g(a) { return a; }\nmatch /b/x/o { allow get: if g(); }", "2:30: function 'g' takes 1 argument, given 0"),
        ("match /b/x/o { allow get: if 'a'.size(1) == 1; }", "1:34: method 'size' takes 0 arguments, given 1"),
        ("match /b/x/o { allow get: if int == 1; }", "1:30: 'int' is a function; call it with arguments in '(…)'"),
        ("match /b/x/o { function f(spot) { return true; } }", "1:16: parameter 'spot' of 'f' hides a built-in name; rename it"),
        ("match /b/x/o { function f() { let a = 1; let a = 2; return a; } }", "1:46: 'a' is already defined; choose another name"),
        ("match /b/x/o { function f() { return true; } function f() { return false; } }", "1:46: function 'f' is declared twice in the same block"),
        ("match /b/x/o { function f() { let a = 1; } }", "1:42: function 'f' must end with 'return <expression>;', found '}'"),
        ("match /b/x/o { allow get: if (1 == 1; }", "1:37: expected ')' to close '(' at 1:30, found ';'"),
        ("match /b/x/o { allow get: if [1, 2; }", "1:35: expected ',' between list items, found ';'"),
        ("match /b/x/o { allow get: if {a: 1}; }", "1:31: map keys must be strings such as 'name', found 'a'"),
        ("match /b/x/o { allow get: if (1)(2); }", "1:33: only functions can be called; '(' follows an expression"),
        ("match /b/x/o { allow get: if; }", "1:29: expected an expression, found ';'"),
        ("match /b/x/o { alow get; }", "1:16: expected 'match', 'allow', 'function' or 'limit', found 'alow'; did you mean 'allow'?"),
        ("match /b/x/o { allow get; } extra", "1:29: expected 'match', 'allow', 'function' or 'limit', found 'extra'"),
        ("service firebase.storage { } extra", "1:30: unexpected 'extra' after the end of the rules"),
    ])
    func singleErrors(text: String, expected: String) {
        let diagnostics = Fixtures.diagnostics(text).map { "\($0.line):\($0.column): \($0.message)" }
        #expect(diagnostics == [expected])
    }

    @Test func recoveryResumesAtTheNextStatement() {
        let text = """
            match /b/x/o {
              function f() {
                let a = 1
                return a;
              }
              allow get: if true
              allow list: if g();
            }
            match /b/y/o { allow get: if h(); }
            """
        let diagnostics = Fixtures.diagnostics(text).map(\.description)
        #expect(diagnostics == [
            "bad.rules:4:5: expected ';' after the value of 'a', found 'return'",
            "bad.rules:7:3: expected ';' after the condition, found 'allow'",
            "bad.rules:7:18: unknown function 'g'",
            "bad.rules:9:30: unknown function 'h'",
        ])
    }

    @Test func missingFunctionsAreNotReportedTwice() {
        let diagnostics = Fixtures.diagnostics("function f( { return 1; }\nmatch /b/x/o { allow get: if f(); }")
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.line == 1)
    }
}
