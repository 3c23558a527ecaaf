"""Calls the drive through a client openapi-python-client generated from its served document
(tests/tests/it/contract.rs generates it into a folder and runs this beside it).

    python call_generated.py PACKAGE_DIR BASE_URL API_TOKEN APP FILE_ID

Signs in with the API token (/exchange-token), then, with the session and the application
header, asks for the storage usage, the library and a download link of FILE_ID. Prints what each
answered as one JSON object; any other answer (an error body, nothing) fails the script.
"""

import json
import sys
import uuid

package_dir, base_url, api_token, app, file_id = sys.argv[1:]
sys.path.insert(0, package_dir)

from drive_api_client import AuthenticatedClient  # noqa: E402
from drive_api_client.api.auth import exchange_token  # noqa: E402
from drive_api_client.api.download import generate_download_url  # noqa: E402
from drive_api_client.api.library import get_user_storage_usage, select_user_files  # noqa: E402
from drive_api_client.models import FileRecord, FileRef, SessionGrant, StorageUsage  # noqa: E402


def expect(answer, kind):
    if not isinstance(answer, kind):
        sys.exit(f"expected {kind.__name__}, got {answer!r}")
    return answer


signing_in = AuthenticatedClient(base_url=base_url, token=api_token)
session = expect(exchange_token.sync(client=signing_in), SessionGrant)

client = AuthenticatedClient(base_url=base_url, token=session.gel_token, headers={"X-Drive-App": app})
usage = expect(get_user_storage_usage.sync(client=client), StorageUsage)
files = select_user_files.sync(client=client)
if not isinstance(files, list):
    sys.exit(f"expected a list of files, got {files!r}")
link = expect(generate_download_url.sync(client=client, body=FileRef(id=uuid.UUID(file_id))), FileRecord)

print(
    json.dumps(
        {
            "usage": usage.to_dict(),
            "files": [expect(f, FileRecord).to_dict() for f in files],
            "link": link.to_dict(),
        }
    )
)
