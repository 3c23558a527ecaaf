"""Schemathesis hooks for the drive's contract run (tests/tests/it/contract.rs).

Random ids reach nothing: every route would answer 404 and the fuzzer would never get past
the lookup. So before each call, ids the fuzzer made up are swapped, most of the time, for
real ones the test seeded (files, folders, jobs, collections...), read from the JSON file named
by DRIVE_CONTRACT_SEED: {"fileId": [...], "folderId": [...], ...}. Only well-formed UUIDs are
swapped, so the malformed ids of negative cases stay malformed. Cases meant to be valid also
get the rest of the drive's state no schema can state: tokens, part numbers within the seeded
plan, the stored object /insert-file records, a link /import-from-url can fetch, a webhook's link.

After each call, the operation and the status are appended to DRIVE_CONTRACT_CALLS as JSON
lines, so the test can count the operations that got past validation.
"""

import base64
import hashlib
import hmac
import json
import os
import random
import struct
import time
import uuid

import schemathesis

with open(os.environ["DRIVE_CONTRACT_SEED"]) as seed_file:
    SEED = json.load(seed_file)
CALLS = os.environ["DRIVE_CONTRACT_CALLS"]
# Fixed, so a failing run can be repeated.
CHOICE = random.Random(20260928)

# Fields whose ids are of another field's kind.
ALIASES = {
    "fromFolderId": "folderId",
    "parentId": "folderId",
    "collectionId": "playlistId",
    "id": "fileId",
}


# Routes that take things away or close them get ids of their own, so the other routes keep
# finding theirs; and the routes whose `id` is not a file's.
EXPENDABLE_FILES = {"id": "expendableFileId", "fileId": "expendableFileId"}
ROUTE_ALIASES = {
    "/trash-files": EXPENDABLE_FILES,
    "/delete-files": EXPENDABLE_FILES,
    "/restore-files": EXPENDABLE_FILES,
    "/cancel-file-job": {"id": "cancelableJobId"},
    "/retry-file-job": {"id": "retryableJobId"},
    "/delete-job-template": {"id": "expendableTemplateId"},
    "/set-folder-rule-paused": {"id": "ruleId"},
    "/delete-folder-rule": {"id": "expendableRuleId"},
    "/set-file-request-open": {"requestId": "closableRequestId"},
    "/delete-folder": {"folderId": "expendableFolderId"},
    "/delete-playlist": {"playlistId": "expendablePlaylistId"},
    "/delete-gallery": {"galleryId": "expendableGalleryId"},
    "/delete-tag": {"tagId": "expendableTagId"},
    "/delete-file-request": {"requestId": "expendableRequestId"},
    "/close-file-review": {"reviewId": "expendableReviewId"},
    # Routes about a video: its id, most of the time, rather than any file's.
    "/set-video-thumbnail": {"fileId": "videoId"},
    "/create-file-review": {"fileId": "videoId"},
    # A file sent whole, waiting to be recorded (the file of `arrivalId` is in parts, unsent).
    "/finish-request-file": {"arrivalId": "finishableArrivalId"},
}

# Routes that delete or close what other routes need get only ids of their own, even when the
# fuzzer kept an id it had (the stateful phase takes real ids from listings: the request the
# seeded drops belong to, the review the notes are on).
TAKE_AWAY = {"/delete-folder", "/delete-playlist", "/delete-gallery", "/delete-tag", "/delete-file-request", "/close-file-review"}

# Routes that sign parts of a plan: the seeded plan's part count, by route.
PART_COUNTS = {
    "/sign-upload-parts": "uploadPartCount",
    "/sign-request-parts": "arrivalPartCount",
}


def real(kind, value, aliases=ALIASES, always=False):
    """A seeded id of `kind` in place of `value`, when `value` is a UUID and one is seeded; most
    of the time, or `always`."""
    ids = SEED.get(aliases.get(kind, kind))
    if not ids or not isinstance(value, str) or (not always and CHOICE.random() < 0.15):
        return value
    try:
        uuid.UUID(value)
    except ValueError:
        return value
    return CHOICE.choice(ids)


def swap_ids(value, aliases=ALIASES, always=False):
    if isinstance(value, dict):
        for key, item in value.items():
            if key.endswith("Ids") and isinstance(item, list):
                value[key] = [real(key[:-1], i, aliases, always) for i in item]
            elif key.endswith("Id") or key == "id":
                value[key] = real(key, item, aliases, always)
            else:
                swap_ids(item, aliases, always)
    elif isinstance(value, list):
        for item in value:
            swap_ids(item, aliases, always)


# Credentials in the body, by the routes that take them. A token or an object key is state the
# document cannot know, like an id; unlike an id, one that does not exist is a 400 (the field
# is wrong), so cases meant to be valid always carry the real one.
BODY_CREDENTIALS = {
    "/sign-upload-parts": "uploadToken",
    # An upload whose parts are all stored; and one of its own to abort.
    "/complete-multipart-upload": "completableUploadToken",
    "/abort-multipart-upload": "abortableUploadToken",
    "/add-request-file": "dropToken",
    "/sign-request-parts": "dropToken",
    "/finish-request-file": "dropToken",
    # A drop of its own: finishing the other would close it to the calls above.
    "/finish-request-drop": "finishedDropToken",
}


# People's sign-in: which credentials are live is the drive's state, like ids. Invitations are
# good once, each /end-sign-ins ends a sign-in, and each /stop-agent-task ends a task: all are
# handed out one a call.
ONE_A_CALL = {
    "/accept-invitation": ("invitation", "invitation"),
    "/end-sign-ins": ("signInId", "expendableSignInId"),
    "/stop-agent-task": ("taskId", "stoppableTaskId"),
}
# The key the last /begin-totp answered: /confirm-totp is sent its code now.
TOTP = {"secret": None}


def totp_code(secret):
    """RFC 6238's six digits of the base32 `secret` now."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">q", int(time.time()) // 30), hashlib.sha1).digest()
    offset = digest[19] & 0x0F
    return "%06d" % ((struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF) % 1_000_000)


def meant_valid(case):
    meta = getattr(case, "meta", None)
    return meta is not None and meta.generation.mode.is_positive


@schemathesis.hook
def before_call(context, case, kwargs):
    path = case.operation.path
    # The document's own examples are each tried once: always with real ids.
    example = getattr(case, "meta", None) is not None and case.meta.phase.name == "examples"
    swap_ids(case.body, {**ALIASES, **ROUTE_ALIASES.get(path, {})}, always=example or path in TAKE_AWAY)
    if case.path_parameters and "id" in case.path_parameters and meant_valid(case) and CHOICE.random() >= 0.15:
        # Any string is a valid id in a link's path (one that names no file is a 404), so the
        # fuzzer seldom makes one shaped like a UUID: valid cases get the public file's.
        case.path_parameters["id"] = SEED["publicFileId"][0]
    if path == "/renew-session" and meant_valid(case):
        # The browser's cookie, which no schema's example can hold (a case without it stays so).
        case.headers = {**(case.headers or {}), "Cookie": SEED["signInCookie"][0]}
    if not meant_valid(case) or not isinstance(case.body, dict):
        return
    if isinstance(case.body.get("wait"), (int, float)) and case.body["wait"] > 1:
        # A valid wait holds the call that long when nothing happens: up to a minute a case.
        case.body["wait"] = 1
    within = case.body.get("within")
    if isinstance(within, dict) and all(isinstance(within.get(k), (int, float)) for k in ("south", "north")):
        # The one rule of a box its schema cannot state: south is not north of north.
        if within["south"] > within["north"]:
            within["south"], within["north"] = within["north"], within["south"]
    if path in BODY_CREDENTIALS and "token" in case.body:
        case.body["token"] = SEED[BODY_CREDENTIALS[path]][0]
    numbers = case.body.get("partNumbers")
    whole = lambda n: isinstance(n, int) or (isinstance(n, float) and n.is_integer())
    if path in PART_COUNTS and isinstance(numbers, list) and all(whole(n) for n in numbers):
        # Numbers in the plan: how many parts a file has is the drive's to say, like an id.
        count = SEED[PART_COUNTS[path]][0]
        case.body["partNumbers"] = [(int(n) - 1) % count + 1 for n in numbers]
    if path == "/insert-file":
        # The object stored and not yet recorded, at its size: which objects the store
        # holds is state too. Inserting it again answers the same file.
        case.body.update(SEED["storedObject"][0])
        if isinstance(case.body.get("creator"), dict):
            case.body["creator"]["id"] = SEED["userId"][0]
    elif "objectKey" in case.body:
        case.body["objectKey"] = f"users/{SEED['userId'][0]}/{uuid.uuid4().hex}/{case.body.get('fileName', 'f')}"
    if path in ("/share-files", "/unshare-files") and isinstance(case.body.get("handles"), list):
        # Accounts that exist, other than the caller: which handles there are is the drive's.
        case.body["handles"] = SEED["shareHandle"][: max(1, len(case.body["handles"]))]
    if path in ONE_A_CALL:
        field, kind = ONE_A_CALL[path]
        left = SEED[kind]
        case.body[field] = left.pop() if left else case.body.get(field, str(uuid.uuid4()))
    if path in ("/sign-in", "/accept-invitation"):
        case.body["password"] = SEED["password"][0]
        if path == "/sign-in":
            case.body["handle"] = SEED["signInHandle"][0]
            case.body.pop("code", None)
    if path in ("/update-password", "/remove-totp"):
        # The password stays the same: the routes above sign in with it.
        case.body["password"] = SEED["password"][0]
        if path == "/update-password":
            case.body["newPassword"] = SEED["password"][0]
    if path == "/confirm-totp" and TOTP["secret"]:
        case.body["code"] = totp_code(TOTP["secret"])
    if path == "/import-from-url":
        # A link that answers: the drive's own permanent link to a public file.
        case.body["url"] = SEED["importUrl"][0]
    if path == "/create-event-subscription":
        # An https link the drive may send to (loopback is allowed in the tests); which hosts
        # are on the public internet is the network's to say.
        case.body["url"] = SEED["webhookUrl"][0]


@schemathesis.hook
def after_call(context, case, response):
    if case.operation.path == "/begin-totp" and response.status_code == 200:
        TOTP["secret"] = response.json()["secret"]
    with open(CALLS, "a") as calls:
        calls.write(json.dumps({"operation": case.operation.label, "status": response.status_code}) + "\n")
