"""The attachments' fixtures: a use-case backend on the test's database, with its bytes in
the database or in a bucket of a real S3 API server process (moto's, one per test session);
`svc` is parametrised over both, so each test body runs against either store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from agent_chat.config import S3Settings
from agent_chat.db.attachment_models import AttachmentChunk
from agent_chat.db.engine import open_session
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.runs import fake_model_row, managers
from tests.support.s3 import object_keys, running_s3


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Settings]:
    with running_s3(tmp_path_factory.mktemp("moto")) as settings:
        yield settings


@dataclass
class Kept:
    """What the store holds now: chunk rows, or the bucket's objects (and open uploads)."""

    storage: Storage
    s3: S3Settings | None

    def count(self) -> int:
        if self.s3 is not None:
            return len(object_keys(self.s3))
        with open_session(self.storage.engine) as session:
            query = select(func.count(func.distinct(AttachmentChunk.storage_key)))
            return int(session.execute(query).scalar_one())


@pytest.fixture(params=["database", "s3"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def s3_settings(store_kind: str, request: pytest.FixtureRequest) -> S3Settings | None:
    if store_kind == "database":
        return None
    base: S3Settings = request.getfixturevalue("s3_server")
    # One prefix per test: the bucket is shared by the session's tests.
    return S3Settings(
        bucket=base.bucket,
        endpoint_url=base.endpoint_url,
        access_key_id=base.access_key_id,
        secret_access_key=base.secret_access_key,
        region=base.region,
        prefix=f"t{abs(hash(request.node.nodeid))}/",
    )


@pytest.fixture
def svc(storage: Storage, s3_settings: S3Settings | None) -> SimpleNamespace:
    return SimpleNamespace(
        storage=storage, settings=SimpleNamespace(max_upload_mb=2, s3=s3_settings)
    )


@pytest.fixture
def kept(storage: Storage, s3_settings: S3Settings | None) -> Kept:
    return Kept(storage, s3_settings)


@pytest.fixture
async def backend(
    db_url: str, storage: Storage, bridge: RunningBridge, fake_model: RunningFakeModel
) -> AsyncIterator[SimpleNamespace]:
    """The use cases' backend with a real RunManager on the real bridge and the scripted
    model as the default model (`model`: its id)."""
    model_id = fake_model_row(storage, fake_model)
    async with managers(db_url, storage) as make:
        runs = await make(bridge.base_url, s3=None)
        yield SimpleNamespace(storage=storage, runs=runs, settings=runs.settings, model=model_id)
