-- The agent interface's tasks (A2A 1.0). A task belongs to the credential that started it (the
-- API token), not just the account: another token of the same account cannot see it. Its
-- messages, status and artifacts are kept as the A2A wire shapes (JSON), exactly as answered.
create table agent_tasks (
    id uuid primary key,
    context_id uuid not null,
    user_id uuid not null references users (id) on delete cascade,
    token_id uuid not null references api_tokens (id) on delete cascade,
    state text not null check (state in (
        'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED',
        'TASK_STATE_FAILED', 'TASK_STATE_CANCELED')),
    -- The status message (the agent's reply, or why it failed), as a Message.
    status_message jsonb,
    -- When the state last changed; ListTasks' order and its `statusTimestampAfter`.
    status_time timestamptz not null default now(),
    -- The conversation's messages in order: the user's, then the agent's reply.
    history jsonb not null default '[]',
    artifacts jsonb not null default '[]',
    created_at timestamptz not null default now(),
    -- The worker running it, until when: one at a time, and another takes it over when the
    -- lease runs out (a worker killed mid-task).
    leased_by uuid,
    leased_until timestamptz
);

create index agent_tasks_by_token on agent_tasks (token_id, status_time desc, id desc);
create index agent_tasks_by_context on agent_tasks (token_id, context_id, created_at);
create index agent_tasks_to_run on agent_tasks (created_at)
    where state in ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');
