#!/usr/bin/env python3
"""Times what bench/scale.sh compares across store sizes, against a running server whose
folder FOLDER of bucket `files` holds objects `fill-0.txt`, `fill-1.txt`, … and whose bucket
`spots` holds spots as spotstore-bench-fill makes them (25 a city; the first 250 beside
longitude 5, every later one far to the east at the same latitudes). Every request asks for
the same amount at every size: full pages of 100 names (the folder's first 10 pages, paged
through again and again, so as many distinct names at every size), 20
spots of `City 0` … `City 9`, and the spots within 2 km of points beside longitude 5 (the
same spots at every size). Prints one line:
`scale PUT_MS CPU_MS_PER_PUT LIST_MS CITY_MS NEAR_MS DELETE_MS RSS_MB` (medians).

    bench/scale.py URL TOKEN SERVER_PID FOLDER ROUND REPEATS
"""
import http.client, json, statistics, sys, time, urllib.parse

def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100

def rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0

def main():
    url, token, pid, folder, round_, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
    target = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
    headers = {"Authorization": f"Bearer {token}"}

    answer = {}

    def timed(method, path, body=None, extra=None, expect=(200,)):
        started = time.monotonic()
        connection.request(method, path, body=body, headers={**headers, **(extra or {})})
        response = connection.getresponse()
        answer["body"] = response.read()
        if response.status not in expect:
            sys.exit(f"scale.py: {method} {path} answered {response.status}")
        return (time.monotonic() - started) * 1000

    def pages(count):
        # The folder's first 10 pages again and again: as many distinct names at every size,
        # so a big folder is not also asked for more data than SQLite's page cache holds.
        token, times = "", []
        for index in range(count):
            if index % 10 == 0: token = ""
            times.append(timed("GET", f"/v0/b/files/o?prefix={quote(folder + '/')}&maxResults=100&pageToken={quote(token)}"))
            token = json.loads(answer["body"]).get("nextPageToken") or ""
        return times

    quote = lambda name: urllib.parse.quote(name, safe="")
    cpu = cpu_seconds(pid)
    puts = [timed("PUT", f"/v0/b/files/o/{quote(f'{folder}/new-{round_}-{i}.txt')}", body=f"{round_}-{i}".encode() * 10,
                  extra={"Content-Type": "text/plain"}) for i in range(repeats)]
    cpu_per_put = (cpu_seconds(pid) - cpu) * 1000 / repeats
    lists = pages(repeats)
    cities = [timed("GET", f"/v0/b/spots/spots?city={quote(f'City {i % 10}')}&maxResults=20") for i in range(repeats)]
    nears = [timed("GET", f"/v0/b/spots/spots?near={45.1 + (i % 20) / 25},5&radiusKm=2&maxResults=20") for i in range(repeats)]
    deletes = [timed("DELETE", f"/v0/b/files/o/{quote(f'{folder}/new-{round_}-{i}.txt')}", expect=(200, 204)) for i in range(repeats)]
    median = statistics.median
    print(f"scale {median(puts):.2f} {cpu_per_put:.2f} {median(lists):.2f} {median(cities):.2f} {median(nears):.2f} {median(deletes):.2f} {rss_mb(pid):.0f}")

main()
