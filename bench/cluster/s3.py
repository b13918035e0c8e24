#!/usr/bin/env python3
"""s3.py - what bench/cluster.sh asks of the S3 server directly, with botocore (signature V4,
path-style; endpoint, bucket and keys from SPOTSTORE_TEST_S3_ENDPOINT, SPOTSTORE_TEST_S3_BUCKET,
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION).

  s3.py presign-get KEY                  one presigned GET URL (1 h)
  s3.py presign-puts PREFIX THREADS N    lines `THREAD URL`: N presigned PUT URLs per wrk thread,
                                         keys PREFIX<thread>-<n>
  s3.py delete-prefix PREFIX             deletes every object under PREFIX (one DELETE each:
                                         Swift wants Content-MD5 for DeleteObjects); prints the count
"""
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import botocore.session
from botocore.config import Config


def client():
    session = botocore.session.get_session()
    return session.create_client(
        "s3", endpoint_url=os.environ["SPOTSTORE_TEST_S3_ENDPOINT"],
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))


def main():
    bucket = os.environ["SPOTSTORE_TEST_S3_BUCKET"]
    s3 = client()
    command = sys.argv[1]
    if command == "presign-get":
        print(s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": sys.argv[2]}, ExpiresIn=3600))
    elif command == "presign-puts":
        prefix, threads, count = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        for thread in range(1, threads + 1):
            for n in range(count):
                url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": f"{prefix}{thread}-{n}"}, ExpiresIn=3600)
                print(thread, url)
    elif command == "delete-prefix":
        keys, token = [], None
        while True:
            page = s3.list_objects_v2(Bucket=bucket, Prefix=sys.argv[2], **({"ContinuationToken": token} if token else {}))
            keys += [item["Key"] for item in page.get("Contents", [])]
            token = page.get("NextContinuationToken")
            if not token:
                break
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda key: s3.delete_object(Bucket=bucket, Key=key), keys))
        print(len(keys))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
