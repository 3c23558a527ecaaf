// How the public pages (a file request's, a review's) ask the drive: a POST of JSON to one of
// the routes anyone may call, answered in JSON. A refusal is thrown as a `Refused`: its message
// the drive's, its `code` the drive's code for it.

export class Refused extends Error {
  constructor(body, status) {
    super(body.error || "the drive answered " + status);
    this.code = body.code;
  }
}

export async function call(route, body) {
  const answer = await fetch(route, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Refused(json, answer.status);
  return json;
}
