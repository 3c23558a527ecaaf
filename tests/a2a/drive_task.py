"""Drives one task of the drive's agent end to end with the official A2A Python SDK (PyPI
`a2a-sdk`, protocol 1.0), as an outside client would: the card resolved from the drive, a
message sent over JSON-RPC with the API token as bearer, the task read back and listed, and
two refusals mapped to the SDK's own error classes. Prints what it saw as one JSON object for
the end-to-end test (`agent::the_python_a2a_sdk_drives_a_task_end_to_end`) to check.

Usage: python drive_task.py SITE_URL API_TOKEN TEXT
"""

import asyncio
import json
import sys

import httpx
from google.protobuf.json_format import MessageToDict

from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import CancelTaskRequest, GetTaskRequest, ListTasksRequest, Role, SendMessageRequest
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError


async def main(site: str, token: str, text: str) -> dict:
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    config = ClientConfig(httpx_client=http, streaming=False, supported_protocol_bindings=["JSONRPC"])
    client = await create_client(site, client_config=config)
    seen: dict = {}
    request = SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))
    async for response in client.send_message(request):
        if response.HasField("task"):
            seen["sent"] = MessageToDict(response.task)
    task_id = seen["sent"]["id"]
    seen["got"] = MessageToDict(await client.get_task(GetTaskRequest(id=task_id, history_length=1)))
    listed = await client.list_tasks(ListTasksRequest(page_size=10))
    seen["listed"] = [t.id for t in listed.tasks]
    try:
        await client.get_task(GetTaskRequest(id="00000000-0000-4000-8000-000000000000"))
        seen["unknown"] = "answered"
    except TaskNotFoundError:
        seen["unknown"] = "TaskNotFoundError"
    try:
        await client.cancel_task(CancelTaskRequest(id=task_id))
        seen["cancel"] = "answered"
    except TaskNotCancelableError:
        seen["cancel"] = "TaskNotCancelableError"
    await client.close()
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))))
