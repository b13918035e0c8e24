"""Driver of bench/resumable.sh: uploads one file to a running spotstore serve through a
single PUT and through each resumable protocol in fixed chunks (over one kept-alive
connection, each chunk a view of the file, not a copy), and measures MB/s; then
cuts each resumable upload half way through a chunk and resumes it, counting the bytes
sent twice. Raw sockets (http.client), so every protocol pays the same client cost.

    python3 resumable.py HOST PORT TOKEN FILE CHUNK_MIB RUNS
"""
import base64, hashlib, http.client, json, socket, statistics, sys, time, urllib.parse

HOST, PORT, TOKEN, FILE = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
CHUNK = int(sys.argv[5]) << 20
RUNS = int(sys.argv[6])
DATA = open(FILE, "rb").read()
DIGEST = hashlib.sha256(DATA).hexdigest()
CHUNKS = memoryview(DATA)  # chunks sent as views of the file, not copies
AUTH = {"Authorization": "Bearer " + TOKEN}
counter = [0]
sent = [0]  # body bytes sent, for counting what a resume sends twice


def name():
    counter[0] += 1
    return "bench/resumable-%d.bin" % counter[0]


# One kept-alive connection for every request, as SDKs and browsers keep theirs.
connection = http.client.HTTPConnection(HOST, PORT, timeout=600)


def request(method, path, body=b"", headers=None, conflict_ok=False, missing_ok=False):
    if method in ("PUT", "PATCH") or "upload_id" in path:
        sent[0] += len(body)  # the file's bytes, not the metadata of a start
    connection.request(method, path, body=body, headers={**AUTH, **(headers or {})})
    response = connection.getresponse()
    payload = response.read()
    if response.status >= 300 and not (conflict_ok and response.status == 409) and not (missing_ok and response.status == 404):
        raise SystemExit("%s %s: %d %s" % (method, path, response.status, payload[:300]))
    return response, payload


def check(payload):
    stored = json.loads(payload)
    if stored["sha256"] != DIGEST:
        raise SystemExit("stored bytes differ from the file")


def cut_send(method, path, headers, body, keep):
    """Sends the head and the first `keep` bytes of `body`, then closes the connection;
    returns the response head text that arrived (a 104 announcement), if any."""
    sock = socket.create_connection((HOST, PORT))
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: %s:%d" % (HOST, PORT), "Content-Length: %d" % len(body)]
    lines += ["%s: %s" % item for item in {**AUTH, **headers}.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body[:keep])
    sent[0] += keep
    sock.settimeout(0.5)
    received = b""
    try:
        while b"\r\n\r\n" not in received:
            part = sock.recv(4096)
            if not part:
                break
            received += part
    except socket.timeout:
        pass
    sock.close()
    return received.decode("latin-1")


# --- single PUT -----------------------------------------------------------------------

def single_put():
    _, payload = request("PUT", "/v0/b/media/o/" + urllib.parse.quote(name(), safe=""), DATA)
    check(payload)


# --- Firebase resumable ----------------------------------------------------------------

def firebase_start(path):
    response, _ = request("POST", "/v0/b/media/o?name=" + urllib.parse.quote(path, safe=""), json.dumps({"name": path}).encode(), {
        "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
        "X-Goog-Upload-Header-Content-Length": str(len(DATA)), "Content-Type": "application/json"})
    return urllib.parse.urlsplit(response.getheader("X-Goog-Upload-URL"))._replace(scheme="", netloc="").geturl()


def firebase_from(url, offset):
    # A 409 (the server finished storing what a cut request sent after the client asked)
    # names the offset to go on from, as with every protocol here.
    while True:
        end = min(offset + CHUNK, len(DATA))
        command = "upload, finalize" if end == len(DATA) else "upload"
        response, payload = request("POST", url, CHUNKS[offset:end], {"X-Goog-Upload-Command": command, "X-Goog-Upload-Offset": str(offset)}, True)
        if response.status == 409:
            offset = int(response.getheader("X-Goog-Upload-Size-Received"))
        elif end == len(DATA):
            return payload
        else:
            offset = end


def firebase():
    check(firebase_from(firebase_start(name()), 0))


def firebase_cut():
    url = firebase_start(name())
    half = len(DATA) // 2 // CHUNK * CHUNK
    offset = 0
    while offset < half:
        request("POST", url, CHUNKS[offset:offset + CHUNK], {"X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": str(offset)})
        offset += CHUNK
    cut_send("POST", url, {"X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": str(offset)}, CHUNKS[offset:offset + CHUNK], CHUNK // 2)
    response, _ = request("POST", url, b"", {"X-Goog-Upload-Command": "query"})
    resumed = int(response.getheader("X-Goog-Upload-Size-Received"))
    check(firebase_from(url, resumed))


# --- tus ---------------------------------------------------------------------------------

TUS = {"Tus-Resumable": "1.0.0"}


def tus_create(path):
    metadata = "objectName " + base64.b64encode(path.encode()).decode()
    response, _ = request("POST", "/v0/b/media/uploads", b"", {**TUS, "Upload-Length": str(len(DATA)), "Upload-Metadata": metadata})
    return urllib.parse.urlsplit(response.getheader("Location")).path


def tus_from(url, offset):
    while offset < len(DATA):
        end = min(offset + CHUNK, len(DATA))
        response, _ = request("PATCH", url, CHUNKS[offset:end], {**TUS, "Upload-Offset": str(offset), "Content-Type": "application/offset+octet-stream"}, True)
        offset = int(response.getheader("Upload-Offset"))


def tus():
    path = name()
    tus_from(tus_create(path), 0)
    _, payload = request("GET", "/v0/b/media/o/" + urllib.parse.quote(path, safe=""))
    check(payload)


def tus_cut():
    path = name()
    url = tus_create(path)
    half = len(DATA) // 2 // CHUNK * CHUNK
    tus_from_to = 0
    while tus_from_to < half:
        request("PATCH", url, CHUNKS[tus_from_to:tus_from_to + CHUNK], {**TUS, "Upload-Offset": str(tus_from_to), "Content-Type": "application/offset+octet-stream"})
        tus_from_to += CHUNK
    cut_send("PATCH", url, {**TUS, "Upload-Offset": str(tus_from_to), "Content-Type": "application/offset+octet-stream"}, CHUNKS[tus_from_to:tus_from_to + CHUNK], CHUNK // 2)
    response, _ = request("HEAD", url, b"", TUS)
    resumed = int(response.getheader("Upload-Offset"))
    tus_from(url, resumed)
    _, payload = request("GET", "/v0/b/media/o/" + urllib.parse.quote(path, safe=""))
    check(payload)


# --- IETF resumable upload (interop version 6) -------------------------------------------

IETF = {"Upload-Draft-Interop-Version": "6"}


def ietf_from(url, offset, chunk=CHUNK):
    while True:
        end = min(offset + chunk, len(DATA))
        complete = "?1" if end == len(DATA) else "?0"
        response, payload = request("PATCH", url, CHUNKS[offset:end], {
            **IETF, "Upload-Offset": str(offset), "Upload-Complete": complete, "Content-Type": "application/partial-upload"}, True)
        if response.status == 409:
            offset = int(response.getheader("Upload-Offset"))
        elif end == len(DATA):
            return payload
        else:
            offset = end


def ietf_create():
    # http.client takes the 104 for the answer: read past informational answers by hand.
    sock = socket.create_connection((HOST, PORT))
    path = "/v0/b/media/o/" + urllib.parse.quote(name(), safe="")
    headers = {**AUTH, **IETF, "Upload-Complete": "?0", "Upload-Length": str(len(DATA)), "Content-Length": str(CHUNK)}
    lines = ["PUT %s HTTP/1.1" % path, "Host: %s:%d" % (HOST, PORT)] + ["%s: %s" % item for item in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + DATA[:CHUNK])
    received = b""
    while True:
        while b"\r\n\r\n" not in received:
            part = sock.recv(65536)
            if not part:
                raise SystemExit("the IETF creation got no final answer")
            received += part
        head, received = received.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        if status >= 200:
            break
    sock.close()
    if status != 201:
        raise SystemExit("IETF creation: %d" % status)
    fields = dict(line.split(": ", 1) for line in head.decode("latin-1").split("\r\n")[1:])
    return urllib.parse.urlsplit(fields["Location"]).path


def ietf():
    check(ietf_from(ietf_create(), CHUNK))


def ietf_cut():
    # The way URLSession sends it: the whole file in one request, cut half way.
    head = cut_send("PUT", "/v0/b/media/o/" + urllib.parse.quote(name(), safe=""), {**IETF, "Upload-Complete": "?1"}, DATA, len(DATA) // 2)
    location = next(line.split(": ", 1)[1] for line in head.split("\r\n") if line.lower().startswith("location: "))
    url = urllib.parse.urlsplit(location).path
    response, _ = request("HEAD", url, b"", IETF, missing_ok=True)
    if response.status == 404:
        # The cut came before the server had made the session it announced (a small body can
        # sit whole in the socket buffers): nothing to resume, so start again, as a client must.
        check(ietf_from(ietf_create(), CHUNK))
        return "(the announced session did not exist yet: sent again from the start)"
    resumed = int(response.getheader("Upload-Offset"))
    check(ietf_from(url, resumed, len(DATA)))


def timed(upload):
    start = time.perf_counter()
    upload()
    return time.perf_counter() - start


MB = len(DATA) / 1e6
ways = [("single PUT", single_put), ("firebase resumable", firebase), ("tus", tus), ("ietf resumable", ietf)]
times = {label: [] for label, _ in ways}
for _ in range(RUNS):  # interleaved, so drift hits every protocol alike
    for label, upload in ways:
        times[label].append(timed(upload))
put = statistics.median(times["single PUT"])
print("%-20s %9s %9s %10s" % ("upload of %.1f MB" % MB, "median s", "MB/s", "vs PUT"))
for label, _ in ways:
    median = statistics.median(times[label])
    print("%-20s %9.3f %9.1f %9.2fx" % (label, median, MB / median, put / median))
print()
print("cut half way through a %d MiB chunk, then resumed: bytes sent twice" % (CHUNK >> 20))
for label, cut in [("firebase resumable", firebase_cut), ("tus", tus_cut), ("ietf resumable (one request)", ietf_cut)]:
    sent[0] = 0
    note = cut()
    again = sent[0] - len(DATA)
    print("%-30s %10d bytes (%.2f chunks)%s" % (label, again, again / CHUNK, " " + note if note else ""))
