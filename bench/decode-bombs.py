#!/usr/bin/env python3
"""Decoding cost of hostile images against a running `spotstore serve` (see decode-bombs.sh).

    decode-bombs.py make TOOL DIR WIDTH HEIGHT [PHOTO_WIDTH PHOTO_HEIGHT]
                                                  # writes DIR/{photo.jpg, scans.jpg, slow.jpg, png16.png}
    decode-bombs.py measure PORT PID MALLORY ALICE DIR RUNS

`make` needs cjpeg and djpeg (libjpeg-turbo-progs) and TOOL, bench/progressive-bomb.c built. `measure` uploads as two users: MALLORY
sends the bombs, ALICE a normal photo; it reports time to answer, the server's peak RSS
(VmHWM, reset through /proc/PID/clear_refs before each case) and alice's upload latency
idle and while four of mallory's bombs arrive at once.
"""
import http.client
import os
import statistics
import subprocess
import sys
import threading
import time
import zlib

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "photos", "coffee.jpg")


def make_progressive(tool, path, width, height, first_al):
    """A progressive JPEG from bench/progressive-bomb.c; returns its scan count."""
    done = subprocess.run([tool, path, str(width), str(height)] + [str(al) for al in first_al], check=True, capture_output=True)
    return int(done.stdout)


def make_png16(path, width, height):
    """RGB, 16 bits a sample, not interlaced; one flat colour per band of rows."""
    def chunk(kind, data):
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    compressor = zlib.compressobj(9)
    parts = []
    for y in range(height):
        level = (64 + (y * 128) // height) * 257
        parts.append(compressor.compress(b"\x00" + (level.to_bytes(2, "big") + b"\x80\x80\xc0\xc0") * width))
    parts.append(compressor.flush())
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([16, 2, 0, 0, 0])
    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", b"".join(parts)) + chunk(b"IEND", b""))


def make_photo(path, width, height):
    """A baseline JPEG (4000×3000 unless told, q90): the coffee fixture tiled."""
    tile = subprocess.run(["djpeg", "-pnm", FIXTURE], check=True, capture_output=True).stdout
    header, pixels = tile.split(b"\n255\n", 1)
    tw, th = map(int, header.split()[1:3])
    rows = [pixels[y * tw * 3:(y + 1) * tw * 3] for y in range(th)]
    with open(path + ".ppm", "wb") as out:
        out.write(b"P6\n%d %d\n255\n" % (width, height))
        for y in range(height):
            row = rows[y % th]
            out.write((row * (width // tw + 1))[: width * 3])
    subprocess.run(["cjpeg", "-quality", "90", "-outfile", path, path + ".ppm"], check=True)
    os.remove(path + ".ppm")


def make(tool, work, width, height, photo_width=4000, photo_height=3000):
    make_photo(f"{work}/photo.jpg", photo_width, photo_height)
    # Y and Cb first at bit 3, Cr at bit 2: 2 + 63 * (4 + 4 + 3) = 695 scans (the bomb had 694).
    scans = make_progressive(tool, f"{work}/scans.jpg", width, height, [3, 3, 2])
    # Grey, 2 + 63 * 7 = 443 scans: under the scan limit and (200 MB of coefficients at
    # 10000×9999) under the memory budget, so only the time limit can stop it.
    slow = make_progressive(tool, f"{work}/slow.jpg", width, height, [6])
    make_png16(f"{work}/png16.png", width, height)
    for name, note in [("photo.jpg", f"{photo_width}x{photo_height} baseline q90"), ("scans.jpg", f"{width}x{height} progressive, {scans} scans"),
                       ("slow.jpg", f"{width}x{height} grey progressive, {slow} scans"), ("png16.png", f"{width}x{height} 16-bit RGB")]:
        print(f"  {name:10} {os.path.getsize(f'{work}/{name}') / 1024:8.0f} KiB  {note}")


def unique(image, n):
    """`image` with a comment naming `n`, so no upload is another's copy (the server reuses the
    thumbnails of bytes it has seen): a JPEG COM segment after SOI, a PNG tEXt chunk after IHDR."""
    text = b"upload %d" % n
    if image.startswith(b"\xff\xd8"):
        return image[:2] + b"\xff\xfe" + (len(text) + 2).to_bytes(2, "big") + text + image[2:]
    chunk = b"tEXt" + b"Comment\x00" + text
    return image[:33] + (len(chunk) - 4).to_bytes(4, "big") + chunk + zlib.crc32(chunk).to_bytes(4, "big") + image[33:]


class Server:
    def __init__(self, port, pid):
        self.port, self.pid, self.count = port, pid, 0
        self.lock = threading.Lock()

    def upload(self, token, path):
        with self.lock:
            self.count += 1
            name = f"b{self.count}%2F{os.path.basename(path)}"  # its own spot: no per-spot limit in the way
        with open(path, "rb") as f:
            body = unique(f.read(), self.count)
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        started = time.monotonic()
        connection.request("PUT", f"/v0/b/spots/o/{name}", body, {"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        answer = response.read().decode("utf-8", "replace")
        elapsed = time.monotonic() - started
        connection.close()
        return response.status, elapsed, answer

    def reset_peak(self):
        with open(f"/proc/{self.pid}/clear_refs", "w") as f:
            f.write("5")

    def memory_kib(self, field):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0


def message(answer):
    start = answer.find('"message"')
    return answer[start + 11:start + 131].split('"')[0] if start >= 0 else answer[:120]


def measure(port, pid, mallory, alice, work, runs):
    server = Server(port, pid)
    photo = f"{work}/photo.jpg"
    server.upload(alice, photo)  # warm up
    print(f"server RSS at rest: {server.memory_kib('VmRSS') / 1024:.0f} MB")

    idle = []
    for _ in range(runs):
        status, seconds, answer = server.upload(alice, photo)
        assert status == 200, (status, answer)
        idle.append(seconds)
    print(f"\nalice's photo on an idle server: median {statistics.median(idle) * 1000:.0f} ms over {runs} uploads")

    print("\none bomb at a time (mallory):")
    print(f"  {'bomb':10} {'status':>6} {'answered':>9} {'peak RSS':>9}  message")
    for bomb in ["scans.jpg", "slow.jpg", "png16.png"]:
        server.reset_peak()
        status, seconds, answer = server.upload(mallory, f"{work}/{bomb}")
        print(f"  {bomb:10} {status:>6} {seconds:8.2f}s {server.memory_kib('VmHWM') / 1024:7.0f}MB  {message(answer) if status != 200 else 'accepted'}")

    print("\nfour bombs at once (mallory), alice's photo sent 0.2 s after them:")
    print(f"  {'bombs':10} {'alice':>9} {'vs idle':>8} {'bombs answered':>15} {'peak RSS':>9}")
    for bomb in ["scans.jpg", "slow.jpg", "png16.png"]:
        server.reset_peak()
        results = {}

        def send(key, token, path):
            results[key] = server.upload(token, path)

        threads = [threading.Thread(target=send, args=(i, mallory, f"{work}/{bomb}")) for i in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(0.2)
        send("alice", alice, photo)
        for thread in threads:
            thread.join()
        status, seconds, answer = results.pop("alice")
        assert status == 200, (status, answer)
        bombs = sorted(r[1] for r in results.values())
        statuses = ",".join(sorted({str(r[0]) for r in results.values()}))
        print(f"  {bomb:10} {seconds * 1000:7.0f}ms {seconds / statistics.median(idle):7.1f}x "
              f"{bombs[0]:5.1f}-{bombs[-1]:.1f}s ({statuses}) {server.memory_kib('VmHWM') / 1024:7.0f}MB")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3], *(int(n) for n in sys.argv[4:]))
    else:
        measure(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6], int(sys.argv[7]))
