#!/usr/bin/env python3
"""The floor for durable small writes: what SpotStore's embedded store does for each
object at the least, done directly on the same disk, with THREADS threads at once:
write the bytes to a temporary file, fsync it, rename it into a two-level folder by name,
fsync that folder, and record the object in SQLite (WAL, synchronous=FULL) in a
transaction of its own. Prints one line: `floor THREADS COUNT SECONDS WRITES_PER_SECOND`.

    bench/durable-floor.py DIR COUNT THREADS SIZE
"""
import hashlib, os, sqlite3, sys, threading, time

def main():
    folder, count, threads, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    os.makedirs(os.path.join(folder, "tmp"), exist_ok=True)
    database = os.path.join(folder, "catalog.sqlite")
    setup = sqlite3.connect(database)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.execute("CREATE TABLE IF NOT EXISTS objects (name TEXT PRIMARY KEY, digest TEXT NOT NULL, size INTEGER NOT NULL)")
    setup.commit()
    setup.close()

    def work(worker):
        connection = sqlite3.connect(database, timeout=60, isolation_level=None)
        connection.execute("PRAGMA synchronous=FULL")
        for index in range(worker, count, threads):
            seed = f"{worker}-{index}-".encode()
            data = (seed * (size // len(seed) + 1))[:size]
            digest = hashlib.sha256(data).hexdigest()
            temporary = os.path.join(folder, "tmp", f"{worker}-{index}")
            with open(temporary, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            target = os.path.join(folder, digest[:2], digest[2:4])
            os.makedirs(target, exist_ok=True)
            os.rename(temporary, os.path.join(target, digest))
            directory = os.open(target, os.O_RDONLY)
            os.fsync(directory)
            os.close(directory)
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?)", (f"bulk/{worker}-{index}.txt", digest, size))
            connection.execute("COMMIT")
        connection.close()

    started = time.monotonic()
    workers = [threading.Thread(target=work, args=(worker,)) for worker in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    seconds = time.monotonic() - started
    print(f"floor {threads} {count} {seconds:.3f} {count / seconds:.1f}")

main()
