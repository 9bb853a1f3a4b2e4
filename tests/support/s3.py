"""A real S3 API server process for the attachment tests: moto's server mode
(`python -m moto.server`, from moto[server]), on a free loopback port, with a bucket made.
Its own process, as a real bucket service would be: the app's boto3 client talks HTTP to it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_chat.config import S3Settings
from tests.support.processes import free_port, start_process, stop_process

BUCKET = "agent-chat-attachments"


@contextmanager
def running_s3(log_dir: Path) -> Iterator[S3Settings]:
    """moto's S3 server with `BUCKET` made; the settings that reach it."""
    import boto3

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "MOTO_PORT": str(port)}
    process = start_process(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        log=log_dir / "moto.log",
        health=f"{url}/moto-api/",
        timeout=60,
    )
    try:
        settings = S3Settings(
            bucket=BUCKET,
            endpoint_url=url,
            access_key_id="test-key",
            secret_access_key="test-secret",
            region="us-east-1",
        )
        client = boto3.client(
            "s3",
            endpoint_url=url,
            aws_access_key_id="test-key",
            aws_secret_access_key="test-secret",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=BUCKET)
        yield settings
    finally:
        stop_process(process)


def object_keys(settings: S3Settings) -> list[str]:
    """Every key under the settings' prefix, and its unfinished multipart uploads (what the tests check was or was not kept)."""
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=settings.endpoint_url,
        aws_access_key_id=settings.access_key_id,
        aws_secret_access_key=settings.secret_access_key,
        region_name=settings.region,
    )
    listed = client.list_objects_v2(Bucket=settings.bucket, Prefix=settings.prefix)
    keys = [item["Key"] for item in listed.get("Contents", [])]
    uploads = client.list_multipart_uploads(Bucket=settings.bucket, Prefix=settings.prefix)
    uploads = uploads.get("Uploads", [])
    return keys + [f"(multipart) {u['Key']}" for u in uploads]
