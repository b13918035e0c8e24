#!/usr/bin/env python3
"""Signs requests with botocore's own S3 SigV4 signer, for S3BlobsTests to compare with.

Reads a JSON list of requests on stdin, each:
  {"method", "path" (not encoded), "query": [[name, value], ...] (not encoded),
   "headers": {name: value} (host included), "payload_hash",
   "access_key", "secret_key", "region", "timestamp" ("20130524T000000Z")}
and prints a JSON list of {"authorization", "path", "canonical_request"}, where "path" is the
path as botocore's S3 serializer puts it in the URL.
"""
import datetime
import json
import sys
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode, percent_encode_sequence


class FixedPayloadAuth(botocore.auth.S3SigV4Auth):
    """S3SigV4Auth with the payload hash given, as for a body streamed from a file."""

    def __init__(self, credentials, region, payload_hash):
        super().__init__(credentials, "s3", region)
        self.payload_hash = payload_hash

    def payload(self, request):
        return self.payload_hash

    def canonical_request(self, request):
        self.last_canonical_request = super().canonical_request(request)
        return self.last_canonical_request


def sign(case):
    # As botocore's REST serializer does for S3: the key keeps '/' and '~'; the query is
    # percent-encoded in the order given.
    path = percent_encode(case["path"], safe="/~")
    query = percent_encode_sequence([tuple(pair) for pair in case["query"]])
    url = "https://" + case["headers"]["host"] + path + ("?" + query if query else "")
    request = AWSRequest(method=case["method"], url=url, headers=dict(case["headers"]))
    auth = FixedPayloadAuth(Credentials(case["access_key"], case["secret_key"]), case["region"], case["payload_hash"])
    now = datetime.datetime.strptime(case["timestamp"], "%Y%m%dT%H%M%SZ")
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=now):
        auth.add_auth(request)
    return {"authorization": request.headers["Authorization"], "path": path, "canonical_request": auth.last_canonical_request}


json.dump([sign(case) for case in json.load(sys.stdin)], sys.stdout)
