"""A loopback stand-in for the Hugging Face Hub (and for raw file hosts), for download tests without a network.

:class:`FakeHub` serves, on ``127.0.0.1`` (a free port, a daemon thread), exactly the endpoints that
``huggingface_hub`` 0.36 uses for ``snapshot_download(repo_id, revision=..., allow_patterns=..., ignore_patterns=...)``
and ``HfApi().list_repo_files(repo_id, revision=...)``:

* ``GET /api/models/{repo_id}`` and ``GET /api/models/{repo_id}/revision/{revision}`` (``HfApi.model_info`` /
  ``repo_info``): ``id``, ``sha`` (the commit) and ``siblings`` (``rfilename``, ``size``, ``blobId``, ``lfs``);
* ``GET /api/models/{repo_id}/tree/{revision}[/{path}][?recursive=True]`` (``HfApi.list_repo_tree``, which
  ``list_repo_files`` uses): ``type`` file/directory, ``path``, ``oid``, ``size``, ``lfs``; one page, no ``Link``;
* ``HEAD`` / ``GET /{repo_id}/resolve/{revision}/{filename}`` (``hf_hub_download``): ``X-Repo-Commit``, ``ETag``
  (the git blob sha1), ``Content-Length``, ``Accept-Ranges``. Large ("LFS") files answer as on the real Hub: a
  302 to a blob URL (``/lfs-blobs/{sha256}`` on this server) with ``X-Linked-Etag`` (the SHA-256) and
  ``X-Linked-Size``, which the library follows for the download;
* ``GET`` / ``HEAD /lfs-blobs/{sha256}``: the LFS blob itself (the "CDN").

A revision is ``"main"`` or the repository's 40-hex commit; anything else is a 404 with ``X-Error-Code:
RevisionNotFound`` (``huggingface_hub.errors.RevisionNotFoundError``); an unknown repository is a 404 with
``X-Error-Code: RepoNotFound`` (``RepositoryNotFoundError``); an unknown file a 404 with ``X-Error-Code:
EntryNotFound`` and ``X-Repo-Commit`` (``EntryNotFoundError``). File ``GET`` requests honour a single ``Range``
(``bytes=a-b``, ``bytes=a-``, ``bytes=-n``: 206 with ``Content-Range``; 416 when unsatisfiable), since the
library resumes interrupted downloads that way.

:meth:`FakeHub.add_file` serves plain files at arbitrary paths (``GET`` with ``Range``, ``HEAD``), so the same
server can stand in for ``raw.githubusercontent.com``. Every request is recorded as ``(method, path)`` in
:attr:`FakeHub.requests` (path without query string, percent-decoded), so a test can check that nothing was
requested after a point.

``huggingface_hub`` reads ``HF_ENDPOINT`` and ``HF_HOME`` when it is imported: point a *subprocess* at the server.

Example::

    with FakeHub() as hub:
        commit = hub.add_repo("cross-encoder/nli-deberta-v3-large", model_dir)
        hub.add_file("/data/CAP-Correctness.csv", csv_path)
        env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf")}
        env.pop("HF_HUB_OFFLINE", None)
        subprocess.run([sys.executable, "-c", "from huggingface_hub import snapshot_download; "
                        "print(snapshot_download('cross-encoder/nli-deberta-v3-large'))"], env=env, check=True)
        mark = len(hub.requests)
        ...  # offline work
        assert hub.requests[mark:] == []
"""

from __future__ import annotations

import email.utils
import fnmatch
import hashlib
import json
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import NamedTuple, overload
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["LFS_PATTERNS", "LFS_THRESHOLD", "FakeHub", "HubFile", "Request", "RequestLog", "repo_commit"]

#: Files stored as LFS blobs on the fake Hub (the patterns of the Hub's default ``.gitattributes``) ...
LFS_PATTERNS: tuple[str, ...] = (
    "*.bin", "*.safetensors", "*.ckpt", "*.pt", "*.pth", "*.h5", "*.msgpack", "*.onnx", "*.ot", "*.tflite",
    "*.model", "*.npy", "*.npz", "*.pkl", "*.pickle", "*.zip", "*.gz", "*.tar", "*.arrow", "*.parquet",
)
#: ... and every file at least this large (bytes).
LFS_THRESHOLD = 10 * 1024 * 1024

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REPO = r"(?P<repo>[^/]+(?:/[^/]+)?)"
_API_INFO = re.compile(rf"^/api/models/{_REPO}(?:/revision/(?P<rev>[^/]+))?$")
_API_TREE = re.compile(rf"^/api/models/{_REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?$")
_RESOLVE = re.compile(rf"^/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_LFS_BLOB = re.compile(r"^/lfs-blobs/(?P<sha>[0-9a-f]{64})$")
_DATE = email.utils.formatdate(0, usegmt=True)  # a fixed Last-Modified: the content never changes


class Request(NamedTuple):
    """One request the server received: ``method`` (GET, HEAD...) and ``path`` (decoded, no query string)."""

    method: str
    path: str


class RequestLog(Sequence[Request]):
    """A thread-safe, append-only list of :class:`Request` (indexing and slicing copy under a lock)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Request] = []

    def append(self, request: Request) -> None:
        with self._lock:
            self._items.append(request)

    @overload
    def __getitem__(self, index: int) -> Request: ...

    @overload
    def __getitem__(self, index: slice) -> list[Request]: ...

    def __getitem__(self, index: int | slice) -> Request | list[Request]:
        with self._lock:
            return self._items[index]

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __iter__(self) -> Iterator[Request]:
        with self._lock:
            return iter(list(self._items))

    def __repr__(self) -> str:
        return f"RequestLog({self[:]!r})"


@dataclass(frozen=True)
class HubFile:
    """A served file: its bytes, git blob sha1, SHA-256 and whether the Hub would store it with LFS."""

    data: bytes
    blob_id: str
    sha256: str
    lfs: bool

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def lfs_pointer(self) -> bytes:
        """The git-lfs pointer file that git stores instead of an LFS file."""
        return f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\nsize {self.size}\n".encode()


def _git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def _make_file(path: str, data: bytes) -> HubFile:
    name = path.rsplit("/", 1)[-1]
    lfs = len(data) >= LFS_THRESHOLD or any(fnmatch.fnmatch(name, pattern) for pattern in LFS_PATTERNS)
    file = HubFile(data, "", hashlib.sha256(data).hexdigest(), lfs)
    return HubFile(data, _git_blob_sha1(file.lfs_pointer if lfs else data), file.sha256, lfs)


def repo_commit(files: dict[str, bytes]) -> str:
    """The deterministic commit of a repository: sha1 over its files sorted by path (path, size, bytes)."""
    digest = hashlib.sha1()
    for path in sorted(files):
        data = files[path]
        digest.update(path.encode("utf-8") + b"\x00" + str(len(data)).encode() + b"\x00")
        digest.update(data)
    return digest.hexdigest()


@dataclass(frozen=True)
class _Repo:
    repo_id: str
    commit: str
    files: dict[str, HubFile]

    def directories(self) -> list[str]:
        found = {"/".join(path.split("/")[:i]) for path in self.files for i in range(1, path.count("/") + 1)}
        return sorted(found)


class FakeHub:
    """A loopback HTTP server that serves model repositories like the Hugging Face Hub, and plain files.

    Use as a context manager (or call :meth:`start` / :meth:`close`); :attr:`url` is ``http://127.0.0.1:PORT``
    (the value for ``HF_ENDPOINT``). Repositories and files may be added before or after starting.

    Example::

        with FakeHub() as hub:
            commit = hub.add_repo("roberta-large", directory)
            print(hub.url, commit, list(hub.requests))
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._repos: dict[str, _Repo] = {}
        self._plain: dict[str, HubFile] = {}
        self._blobs: dict[str, HubFile] = {}
        self.requests = RequestLog()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- content ----------------------------------------------------------------------------------------------

    def add_repo(self, repo_id: str, directory: Path | str) -> str:
        """Serve every file under ``directory`` (recursively) as model repository ``repo_id``; returns its commit.

        The commit is a deterministic 40-hex sha1 over the files' sorted (path, bytes); adding a repository again
        replaces it. Files are read now: later changes to ``directory`` are not served.
        """
        if not re.fullmatch(r"[^/]+(/[^/]+)?", repo_id):
            raise ValueError(f"repo_id must be 'name' or 'namespace/name', got {repo_id!r}")
        root = Path(directory)
        if not root.is_dir():
            raise NotADirectoryError(root)
        contents = {path.relative_to(root).as_posix(): path.read_bytes()
                    for path in sorted(root.rglob("*")) if path.is_file()}
        if not contents:
            raise ValueError(f"{root} holds no files")
        files = {path: _make_file(path, data) for path, data in contents.items()}
        commit = repo_commit(contents)
        with self._lock:
            self._repos[repo_id] = _Repo(repo_id, commit, files)
            self._blobs.update({file.sha256: file for file in files.values() if file.lfs})
        return commit

    def add_file(self, url_path: str, path: Path | str) -> str:
        """Serve the bytes of ``path`` at ``url_path`` (e.g. ``"/data/CAP-Correctness.csv"``); returns its full URL
        once the server runs (else the path alone)."""
        if not url_path.startswith("/"):
            raise ValueError(f"url_path must start with '/', got {url_path!r}")
        data = Path(path).read_bytes()
        with self._lock:
            self._plain[url_path] = HubFile(data, _git_blob_sha1(data), hashlib.sha256(data).hexdigest(), False)
        return (self.url + url_path) if self._server is not None else url_path

    def commit(self, repo_id: str) -> str:
        """The commit :meth:`add_repo` returned for ``repo_id``."""
        with self._lock:
            return self._repos[repo_id].commit

    # -- server -----------------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (the server must be running)."""
        if self._server is None:
            raise RuntimeError("FakeHub is not running; use it as a context manager or call start()")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeHub:
        """Start serving on 127.0.0.1 (a free port) from a daemon thread."""
        if self._server is not None:
            return self
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.hub = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="FakeHub", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and free the port."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server, self._thread = None, None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    # -- lookups used by the handler --------------------------------------------------------------------------

    def _repo(self, repo_id: str) -> _Repo | None:
        with self._lock:
            return self._repos.get(repo_id)

    def _plain_file(self, path: str) -> HubFile | None:
        with self._lock:
            return self._plain.get(path)

    def _blob(self, sha256: str) -> HubFile | None:
        with self._lock:
            return self._blobs.get(sha256)


class _Handler(BaseHTTPRequestHandler):
    """Answers one connection's requests for the :class:`FakeHub` in ``self.server.hub``."""

    protocol_version = "HTTP/1.1"
    server_version = "FakeHub/1.0"

    @property
    def hub(self) -> FakeHub:
        return self.server.hub  # type: ignore[attr-defined,no-any-return]

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass  # quiet: the requests are in hub.requests

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._dispatch(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch(head=True)

    def do_POST(self) -> None:  # noqa: N802
        self._record()
        self._error(405, "MethodNotAllowed", "the fake Hub serves downloads only")

    # -- routing ----------------------------------------------------------------------------------------------

    def _record(self) -> tuple[str, dict[str, list[str]]]:
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        self.hub.requests.append(Request(self.command, path))
        return path, parse_qs(parts.query)

    def _dispatch(self, head: bool) -> None:
        path, query = self._record()
        try:
            plain = self.hub._plain_file(path)
            if plain is not None:
                self._send_file(plain, head, {})
                return
            if (match := _LFS_BLOB.match(path)) is not None:
                blob = self.hub._blob(match["sha"])
                if blob is None:
                    self._error(404, "EntryNotFound", "no such LFS blob")
                else:
                    self._send_file(blob, head, {})
                return
            if not head and (match := _API_TREE.match(path)) is not None:
                self._tree(match["repo"], match["rev"], match["path"] or "", query)
                return
            if not head and (match := _API_INFO.match(path)) is not None:
                self._info(match["repo"], match["rev"])
                return
            if (match := _RESOLVE.match(path)) is not None:
                self._resolve(match["repo"], match["rev"], match["file"], head)
                return
            self._error(404, None, f"no route for {path}")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _repo_at(self, repo_id: str, revision: str | None) -> _Repo | None:
        """The repository, or None after answering 404 (unknown repo or revision)."""
        repo = self.hub._repo(repo_id)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return None
        if revision is not None and revision not in ("main", repo.commit):
            self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
            return None
        return repo

    # -- endpoints --------------------------------------------------------------------------------------------

    def _info(self, repo_id: str, revision: str | None) -> None:
        repo = self._repo_at(repo_id, revision)
        if repo is None:
            return
        siblings = []
        for name, file in sorted(repo.files.items()):
            sibling: dict[str, object] = {"rfilename": name, "size": file.size, "blobId": file.blob_id}
            if file.lfs:
                sibling["lfs"] = {"size": file.size, "sha256": file.sha256, "pointerSize": len(file.lfs_pointer)}
            siblings.append(sibling)
        namespace = repo_id.split("/")[0] if "/" in repo_id else None
        self._json({
            "_id": repo.commit[:24], "id": repo_id, "modelId": repo_id, "author": namespace, "sha": repo.commit,
            "lastModified": "2024-01-01T00:00:00.000Z", "createdAt": "2022-01-01T00:00:00.000Z",
            "private": False, "gated": False, "disabled": False, "downloads": 0, "likes": 0, "tags": [],
            "siblings": siblings, "spaces": [], "usedStorage": sum(f.size for f in repo.files.values()),
        })

    def _tree(self, repo_id: str, revision: str, folder: str, query: dict[str, list[str]]) -> None:
        repo = self._repo_at(repo_id, revision)
        if repo is None:
            return
        folder = folder.strip("/")
        recursive = query.get("recursive", ["false"])[-1].lower() in ("true", "1")
        directories = repo.directories()
        if folder and folder not in directories:
            self._error(404, "EntryNotFound", f"{folder} does not exist on {revision}", repo.commit)
            return
        prefix = folder + "/" if folder else ""

        def listed(path: str) -> bool:
            if not path.startswith(prefix):
                return False
            return recursive or "/" not in path[len(prefix):]

        entries: list[dict[str, object]] = []
        for directory in directories:
            if listed(directory):
                tree = hashlib.sha1(f"tree {repo.commit} {directory}".encode()).hexdigest()
                entries.append({"type": "directory", "oid": tree, "size": 0, "path": directory})
        for name, file in sorted(repo.files.items()):
            if listed(name):
                entry: dict[str, object] = {"type": "file", "oid": file.blob_id, "size": file.size, "path": name}
                if file.lfs:
                    entry["lfs"] = {"oid": file.sha256, "size": file.size, "pointerSize": len(file.lfs_pointer)}
                entries.append(entry)
        self._json(entries)

    def _resolve(self, repo_id: str, revision: str, filename: str, head: bool) -> None:
        repo = self._repo_at(repo_id, revision)
        if repo is None:
            return
        file = repo.files.get(filename)
        if file is None:
            self._error(404, "EntryNotFound", f"{filename} does not exist on {revision}", repo.commit)
            return
        headers = {"X-Repo-Commit": repo.commit}
        if file.lfs:  # as the Hub: a redirect to the blob store, the file's identity in X-Linked-*
            self._send(302, b"", head, {
                **headers, "Location": f"{self.hub.url}/lfs-blobs/{file.sha256}",
                "ETag": f'"{file.blob_id}"', "X-Linked-Etag": f'"{file.sha256}"', "X-Linked-Size": str(file.size),
                "Content-Type": "text/plain; charset=utf-8",
            })
            return
        self._send_file(file, head, headers)

    # -- responses --------------------------------------------------------------------------------------------

    def _send_file(self, file: HubFile, head: bool, headers: dict[str, str]) -> None:
        etag = file.sha256 if file.lfs else file.blob_id
        headers = {**headers, "ETag": f'"{etag}"', "Accept-Ranges": "bytes", "Last-Modified": _DATE,
                   "Content-Type": "application/octet-stream"}
        span = self._range(file.size)
        if span is None:
            self._send(200, file.data, head, headers)
        elif span == (-1, -1):
            self._send(416, b"", head, {**headers, "Content-Range": f"bytes */{file.size}"})
        else:
            start, end = span
            self._send(206, file.data[start:end + 1], head,
                       {**headers, "Content-Range": f"bytes {start}-{end}/{file.size}"})

    def _range(self, size: int) -> tuple[int, int] | None:
        """The requested byte span (inclusive), None for the whole file, (-1, -1) when unsatisfiable."""
        header = self.headers.get("Range")
        if not header:
            return None
        match = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", header)
        if match is None or (match[1] == "" and match[2] == ""):
            return None  # several ranges or a malformed header: the whole file (allowed by RFC 9110)
        if match[1] == "":  # the last n bytes
            length = int(match[2])
            return (-1, -1) if length == 0 or size == 0 else (max(size - length, 0), size - 1)
        start = int(match[1])
        end = size - 1 if match[2] == "" else min(int(match[2]), size - 1)
        if start >= size or end < start:
            return (-1, -1)
        return start, end

    def _json(self, value: object) -> None:
        self._send(200, json.dumps(value).encode("utf-8"), False, {"Content-Type": "application/json"})

    def _error(self, status: int, code: str | None, message: str, commit: str | None = None) -> None:
        headers = {"Content-Type": "application/json", "X-Error-Message": message}
        if code is not None:
            headers["X-Error-Code"] = code
        if commit is not None:
            headers["X-Repo-Commit"] = commit
        self._send(status, json.dumps({"error": message}).encode("utf-8"), self.command == "HEAD", headers)

    def _send(self, status: int, body: bytes, head: bool, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)
