"""Tests of pdsparse.data.fetch: mirror copies, (mocked) downloads, verification, cleanup.

No test touches the network: downloads use file:// URLs or a monkeypatched urlopen.
"""

from __future__ import annotations

import bz2
import hashlib
import http.client
import io
import urllib.error
import urllib.request

import pytest

from pdsparse.data import fetch as fetch_mod
from pdsparse.data.fetch import (
    DOWNLOAD_ENV,
    MIRROR_ENV,
    download_allowed,
    fetch,
    kept_path,
    raw_path,
    resolve_mirror,
    verify_file,
)
from pdsparse.data.registry import DatasetSpec
from pdsparse.errors import ConfigError, DataError

TEXT = b"".join(b"%d 1:%d 3:0.5\n" % ((-1) ** i, i + 1) for i in range(200))
BZ = bz2.compress(TEXT)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_spec(**over) -> DatasetSpec:
    base = dict(
        name="toy",
        url="https://example.invalid/libsvm/toy.bz2",
        filename="toy.bz2",
        compression="bz2",
        task="binary",
        n=200,
        d=3,
        nnz=400,
        sha256_text=sha(TEXT),
    )
    base.update(over)
    return DatasetSpec(**base)


@pytest.fixture
def mirror(tmp_path):
    d = tmp_path / "mirror"
    d.mkdir()
    (d / "toy.bz2").write_bytes(BZ)
    return d


@pytest.fixture
def no_network(monkeypatch):
    calls = []

    def fake_urlopen(req, timeout=None):
        calls.append((req.full_url, timeout))
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    return calls


def assert_empty(raw_dir):
    """No file left behind (an empty .verified/ directory may stay)."""
    assert not raw_dir.exists() or [p for p in raw_dir.rglob("*") if p.is_file()] == []


def test_resolve_mirror(monkeypatch, tmp_path):
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    for sub in ("env", "cfg", "m"):
        (tmp_path / sub).mkdir()
    assert resolve_mirror(None) is None
    assert resolve_mirror("  ") is None
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path / "env"))
    assert resolve_mirror(None) == tmp_path / "env"
    assert resolve_mirror(str(tmp_path / "cfg")) == tmp_path / "cfg"  # config wins
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_mirror("~/m") == tmp_path / "m"
    monkeypatch.chdir(tmp_path)
    assert resolve_mirror("cfg") == tmp_path / "cfg"  # relative: from the working directory


@pytest.mark.parametrize("source", ["config", "env"])
def test_resolve_mirror_missing_directory_fails_naming_it(monkeypatch, tmp_path, source):
    # A mirror that was asked for but is not there used to be ignored silently.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    if source == "env":
        monkeypatch.setenv(MIRROR_ENV, "../shared/datasets")
        arg, setting = None, MIRROR_ENV
    else:
        arg, setting = "../shared/datasets", "data.mirror"
    with pytest.raises(ConfigError) as err:
        resolve_mirror(arg)
    msg = str(err.value)
    assert setting in msg and "'../shared/datasets'" in msg
    assert str((tmp_path / "../shared/datasets").absolute()) in msg
    assert "does not exist" in msg and "working directory" in msg
    assert resolve_mirror(arg, must_exist=False) is not None


def test_download_allowed_from_environment(monkeypatch):
    monkeypatch.delenv(DOWNLOAD_ENV, raising=False)
    assert download_allowed() is True and download_allowed(default=False) is False
    monkeypatch.setenv(DOWNLOAD_ENV, "0")
    assert download_allowed() is False
    monkeypatch.setenv(DOWNLOAD_ENV, "1")
    assert download_allowed(default=False) is True
    monkeypatch.setenv(DOWNLOAD_ENV, "maybe")
    with pytest.raises(ConfigError, match=DOWNLOAD_ENV):
        download_allowed()


def test_refetch_restores_the_verified_file_without_any_source(tmp_path, mirror, no_network):
    # Snakemake deletes a rule's output before re-running it; a later fetch with no mirror
    # and no download must find the verified file again, not fail having lost it.
    raw = tmp_path / "raw"
    out = fetch(make_spec(), raw, mirror=mirror, progress=False)
    assert kept_path(make_spec(), raw).samefile(out)
    out.unlink()  # what Snakemake does before a re-run
    again = fetch(make_spec(), raw, mirror=None, progress=False, download=False)
    assert again == out and out.read_bytes() == BZ
    assert no_network == []


def test_kept_copy_that_fails_verification_is_not_used(tmp_path, mirror, no_network):
    raw = tmp_path / "raw"
    out = fetch(make_spec(), raw, mirror=mirror, progress=False)
    out.unlink()
    kept = kept_path(make_spec(), raw)
    kept.unlink()
    kept.write_bytes(bz2.compress(b"1 1:1\n"))  # damaged
    with pytest.raises(DataError, match="downloading is disabled"):
        fetch(make_spec(), raw, mirror=None, progress=False, download=False)
    assert not out.exists() and not kept.exists()


def test_existing_file_is_kept_on_fetch(tmp_path, no_network):
    # files fetched before .verified/ existed get their link on the next fetch
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "toy.bz2").write_bytes(BZ)
    fetch(make_spec(), raw, mirror=None, progress=False, download=False)
    assert kept_path(make_spec(), raw).samefile(raw / "toy.bz2")


def test_mirror_copy_happy_path(tmp_path, mirror, no_network, capsys):
    raw = tmp_path / "raw"
    out = fetch(make_spec(), raw, mirror=mirror)
    assert out == raw / "toy.bz2" == raw_path(make_spec(), raw)
    assert out.read_bytes() == BZ
    assert sorted(p.name for p in raw.iterdir()) == [".verified", "toy.bz2"]
    assert no_network == []
    assert "copied" in capsys.readouterr().err


def test_mirror_copy_accepts_mirror_text_hash(tmp_path, mirror, no_network):
    spec = make_spec(sha256_text=sha(b"canonical text differs"), mirror_sha256_text=sha(TEXT))
    assert fetch(spec, tmp_path / "raw", mirror=mirror, progress=False).is_file()


def test_mirror_uncompressed(tmp_path, no_network):
    m = tmp_path / "m"
    m.mkdir()
    (m / "toy").write_bytes(TEXT)
    spec = make_spec(filename="toy", compression="none", sha256=sha(TEXT))
    out = fetch(spec, tmp_path / "raw", mirror=m, progress=False)
    assert out.name == "toy.txt" and out.read_bytes() == TEXT


def test_mirror_sha_mismatch_leaves_nothing(tmp_path, mirror, no_network):
    raw = tmp_path / "raw"
    spec = make_spec(sha256_text="0" * 64)
    with pytest.raises(DataError) as err:
        fetch(spec, raw, mirror=mirror, progress=False)
    msg = str(err.value)
    assert "'toy'" in msg and "checksum mismatch" in msg and str(mirror / "toy.bz2") in msg
    assert_empty(raw)


def test_mirror_recompressed_needs_text_hash(tmp_path, mirror, no_network):
    spec = make_spec(sha256="1" * 64, sha256_text=None)
    with pytest.raises(DataError, match="needs sha256_text or mirror_sha256_text"):
        fetch(spec, tmp_path / "raw", mirror=mirror, progress=False)
    assert_empty(tmp_path / "raw")


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        (BZ[: len(BZ) // 2], "corrupt or truncated bz2"),
        (b"BZh9" + b"\x00" * 64, "corrupt or truncated bz2"),
        (bz2.compress(b"<html><body>Not Found</body></html>"), "HTML"),
        (bz2.compress(b""), "empty"),
    ],
)
def test_mirror_bad_bz2_leaves_nothing(tmp_path, mirror, no_network, payload, needle):
    (mirror / "toy.bz2").write_bytes(payload)
    raw = tmp_path / "raw"
    with pytest.raises(DataError, match=needle):
        fetch(make_spec(sha256_text=None), raw, mirror=mirror, progress=False)
    assert_empty(raw)


def test_mirror_lacks_file_and_no_network(tmp_path, no_network, capsys):
    empty_mirror = tmp_path / "mirror"
    empty_mirror.mkdir()
    raw = tmp_path / "raw"
    with pytest.raises(DataError) as err:
        fetch(make_spec(), raw, mirror=empty_mirror, timeout=3.5, progress=False)
    msg = str(err.value)
    assert f"mirror {empty_mirror} has no toy.bz2" in msg
    assert "https://example.invalid/libsvm/toy.bz2" in msg
    assert "no network" in msg
    assert "data.mirror" in msg and MIRROR_ENV in msg and "holding toy.bz2" in msg
    assert no_network == [("https://example.invalid/libsvm/toy.bz2", 3.5)]
    assert "falling back to download" in capsys.readouterr().err
    assert_empty(raw)


def test_missing_mirror_dir_and_no_mirror(tmp_path, no_network):
    with pytest.raises(DataError, match="mirror directory .* does not exist"):
        fetch(make_spec(), tmp_path / "raw", mirror=tmp_path / "nowhere", progress=False)
    with pytest.raises(DataError, match="no network"):
        fetch(make_spec(), tmp_path / "raw", mirror=None, progress=False)
    assert_empty(tmp_path / "raw")


def test_download_file_url(tmp_path, capsys):
    srv = tmp_path / "srv"
    srv.mkdir()
    (srv / "toy.bz2").write_bytes(BZ)
    spec = make_spec(url=(srv / "toy.bz2").as_uri(), sha256=sha(BZ))
    raw = tmp_path / "raw"
    out = fetch(spec, raw, mirror=None)
    assert out.read_bytes() == BZ
    assert sorted(p.name for p in raw.iterdir()) == [".verified", "toy.bz2"]
    err = capsys.readouterr().err
    assert "downloading" in err and "100%" in err


def test_download_checksum_mismatch_leaves_nothing(tmp_path):
    srv = tmp_path / "srv"
    srv.mkdir()
    (srv / "toy.bz2").write_bytes(BZ)
    raw = tmp_path / "raw"
    spec = make_spec(url=(srv / "toy.bz2").as_uri(), sha256="2" * 64)
    with pytest.raises(DataError, match=r"download of file://.*checksum mismatch"):
        fetch(spec, raw, progress=False)
    assert_empty(raw)
    # the mirror-only text hash is not accepted for a download
    spec = make_spec(url=spec.url, sha256_text="3" * 64, mirror_sha256_text=sha(TEXT))
    with pytest.raises(DataError, match="decompressed text"):
        fetch(spec, raw, progress=False)
    assert_empty(raw)


class FakeResponse(io.BytesIO):
    def __init__(self, body: bytes, length: int):
        super().__init__(body)
        self.headers = {"Content-Length": str(length)}


def test_download_truncated_by_content_length(tmp_path, monkeypatch):
    monkeypatch.setattr(
        urllib.request, "urlopen", lambda req, timeout=None: FakeResponse(BZ, len(BZ) + 10)
    )
    with pytest.raises(DataError, match=f"truncated: received {len(BZ)} of {len(BZ) + 10}"):
        fetch(make_spec(), tmp_path / "raw", progress=False)
    assert_empty(tmp_path / "raw")


def test_download_interrupted(tmp_path, monkeypatch):
    class Cut(FakeResponse):
        def read(self, size=-1):
            raise http.client.IncompleteRead(b"partial", 100)

    monkeypatch.setattr(urllib.request, "urlopen", lambda req, timeout=None: Cut(BZ, len(BZ)))
    with pytest.raises(DataError, match="interrupted"):
        fetch(make_spec(), tmp_path / "raw", progress=False)
    assert_empty(tmp_path / "raw")


def test_download_http_error(tmp_path, monkeypatch):
    def fake(req, timeout=None):
        raise urllib.error.HTTPError(req.full_url, 404, "Not Found", {}, None)

    monkeypatch.setattr(urllib.request, "urlopen", fake)
    with pytest.raises(DataError, match="HTTP 404 Not Found"):
        fetch(make_spec(), tmp_path / "raw", progress=False)
    assert_empty(tmp_path / "raw")


def test_download_timeout(tmp_path, monkeypatch):
    def fake(req, timeout=None):
        raise TimeoutError("timed out")

    monkeypatch.setattr(urllib.request, "urlopen", fake)
    with pytest.raises(DataError, match="timed out.*no network"):
        fetch(make_spec(), tmp_path / "raw", progress=False)


def test_existing_verified_file_is_reused(tmp_path, mirror, no_network):
    raw = tmp_path / "raw"
    fetch(make_spec(), raw, mirror=mirror, progress=False)
    (mirror / "toy.bz2").unlink()
    assert fetch(make_spec(), raw, mirror=mirror, progress=False).read_bytes() == BZ
    assert no_network == []


def test_existing_bad_file_is_replaced(tmp_path, mirror, no_network):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "toy.bz2").write_bytes(BZ[:10])
    assert fetch(make_spec(), raw, mirror=mirror, progress=False).read_bytes() == BZ
    # and if it cannot be fetched again, the bad file is gone
    (raw / "toy.bz2").write_bytes(BZ[:10])
    with pytest.raises(DataError):
        fetch(make_spec(), raw, mirror=None, progress=False)
    assert_empty(raw)


def test_verify_file_origin_checked(tmp_path):
    p = tmp_path / "toy.bz2"
    p.write_bytes(BZ)
    verify_file(p, make_spec(), origin="mirror")
    with pytest.raises(ValueError, match="origin"):
        verify_file(p, make_spec(), origin="elsewhere")
    assert fetch_mod.MIRROR_ENV == "PDSPARSE_DATA_MIRROR"


def test_mirror_bz2_copy_of_an_uncompressed_set_is_decompressed(tmp_path, no_network):
    """A mirror keeps every file bzip2-compressed: ``toy.bz2`` stands for the URL's ``toy``."""
    m = tmp_path / "m"
    m.mkdir()
    (m / "toy.bz2").write_bytes(BZ)
    spec = make_spec(filename="toy", compression="none", sha256_text=None,
                     mirror_sha256_text=sha(TEXT))
    assert spec.mirror_filenames == ("toy", "toy.bz2")
    out = fetch(spec, tmp_path / "raw", mirror=m, progress=False)
    assert out.name == "toy.txt" and out.read_bytes() == TEXT
    assert no_network == []
    (m / "toy").write_bytes(TEXT)  # the file under its own name wins
    assert fetch(spec, tmp_path / "raw2", mirror=m, progress=False).read_bytes() == TEXT


def test_mirror_bz2_copy_of_an_uncompressed_set_corrupt(tmp_path, no_network):
    m = tmp_path / "m"
    m.mkdir()
    (m / "toy.bz2").write_bytes(BZ[: len(BZ) // 2])
    spec = make_spec(filename="toy", compression="none", sha256_text=sha(TEXT))
    with pytest.raises(DataError, match="cannot decompress"):
        fetch(spec, tmp_path / "raw", mirror=m, progress=False)
    assert_empty(tmp_path / "raw")


def test_a_local_file_is_copied_from_its_path_without_download(tmp_path, no_network):
    """Issue 20: the registry's ``path:`` entry, no URL, downloads disabled."""
    from pdsparse.data.registry import parse_registry
    from pdsparse.repro.config import data_availability

    own = tmp_path / "own" / "mine.txt"
    own.parent.mkdir()
    own.write_bytes(TEXT)
    spec = parse_registry({"datasets": {"mine": {"path": str(own), "task": "binary",
                                                 "n": 200, "sha256_text": sha(TEXT)}}})["mine"]
    raw = tmp_path / "raw"
    assert data_availability(spec, raw, None, False) == "path"
    got = fetch(spec, raw, mirror=None, download=False)
    assert got.read_bytes() == TEXT and no_network == []
    bad = parse_registry({"datasets": {"mine": {"path": str(own), "task": "binary",
                                                "sha256_text": sha(b"other")}}})["mine"]
    with pytest.raises(DataError, match="mine"):
        fetch(bad, tmp_path / "raw2", mirror=None, download=False, force=True)
    gone = parse_registry({"datasets": {"gone": {"path": str(tmp_path / "gone.txt"),
                                                 "task": "binary"}}})["gone"]
    assert data_availability(gone, raw, None, True) is None
    with pytest.raises(DataError, match=r"'gone': its path .*gone.txt does not exist"):
        fetch(gone, raw, mirror=None, download=True)
    assert_empty(tmp_path / "raw3")
