#!/usr/bin/env python3
"""COUNT tiny PUTs into one folder of a SpotStore server by CLIENTS clients at once, each on
one kept-alive connection; every object has bytes of its own, and a name that starts with
TAG (so runs with different tags add to the folder). Prints one line:
`spotstore CLIENTS COUNT SECONDS WRITES_PER_SECOND P50_MS P99_MS FAILED`.

    bench/small-writes.py URL TOKEN BUCKET FOLDER COUNT CLIENTS SIZE [TAG]
"""
import http.client, sys, threading, time, urllib.parse

def main():
    url, token, bucket, folder = sys.argv[1:5]
    count, clients, size = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
    tag = sys.argv[8] if len(sys.argv) > 8 else ""
    target = urllib.parse.urlsplit(url)
    latencies, failures = [], []
    lock = threading.Lock()

    def work(client):
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
        mine, failed = [], 0
        for index in range(client, count, clients):
            name = urllib.parse.quote(f"{folder}/{tag}{client}-{index}.txt", safe="")
            seed = f"{folder}-{tag}{client}-{index}-".encode()
            body = (seed * (size // len(seed) + 1))[:size]
            started = time.monotonic()
            connection.request("PUT", f"/v0/b/{bucket}/o/{name}", body=body,
                               headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"})
            response = connection.getresponse()
            response.read()
            mine.append(time.monotonic() - started)
            if response.status != 200:
                failed += 1
                if failed == 1:
                    print(f"small-writes.py: PUT answered {response.status}", file=sys.stderr)
        connection.close()
        with lock:
            latencies.extend(mine)
            failures.append(failed)

    started = time.monotonic()
    workers = [threading.Thread(target=work, args=(client,)) for client in range(clients)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    seconds = time.monotonic() - started
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
    print(f"spotstore {clients} {count} {seconds:.3f} {count / seconds:.1f} {p50:.2f} {p99:.2f} {sum(failures)}")

main()
