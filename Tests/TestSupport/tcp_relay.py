#!/usr/bin/env python3
"""A TCP relay for tests (TestSupport.TCPRelay): listens on 127.0.0.1, on PORT (the second
argument) or a free port, prints the port, then relays every connection to TARGET (HOST:PORT);
with TARGET "silent" it accepts connections and never answers, with "http" it answers every
request with a web page, with "slowdown:N:HOST:PORT" it answers the first N connections with
S3's 503 SlowDown and relays the rest. Runs until killed; then its port refuses connections and
every connection it relayed is cut. It also ends when its stdin closes (the test process ended)."""
import os
import signal
import socket
import sys
import threading

# A child of the test process inherits its blocked signals, SIGTERM among them.
signal.pthread_sigmask(signal.SIG_SETMASK, [])
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()


def pump(source, sink):
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    for end in (source, sink):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


target = sys.argv[1]
server = socket.socket()
# Listening again on the port of a relay that was stopped: its connections may be in TIME_WAIT.
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 0))
server.listen(64)
print(server.getsockname()[1], flush=True)
silent = []
slowdowns = 0
if target.startswith("slowdown:"):
    _, slowdowns, target = target.split(":", 2)
    slowdowns = int(slowdowns)


def answer(client, status, content_type, body):
    client.recv(65536)
    client.sendall(b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                   % (status, content_type, len(body), body))
    client.close()


while True:
    client, _ = server.accept()
    if slowdowns > 0:
        slowdowns -= 1
        answer(client, b"503 Slow Down", b"application/xml",
               b"<?xml version='1.0' encoding='UTF-8'?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>")
        continue
    if target == "silent":
        silent.append(client)
        continue
    if target == "http":
        answer(client, b"200 OK", b"text/html", b"<html><body>Not an object store</body></html>")
        continue
    host, port = target.rsplit(":", 1)
    upstream = socket.create_connection((host, int(port)))
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
