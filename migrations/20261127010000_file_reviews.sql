-- Reviews: a link to watch one of the owner's videos or tracks and leave notes at moments of it.
-- A review goes with its file (deleted with it).
create table file_reviews (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    file_id uuid not null references files (id) on delete cascade,
    title text not null,
    created_at timestamptz not null default now()
);
create index file_reviews_by_user on file_reviews (user_id, created_at desc);

-- Notes at a moment (`seconds`), and replies to them (`reply_to`, at their note's moment). A
-- reviewer is a name given on the page; the owner's replies are marked `by_owner`.
create table review_notes (
    id uuid primary key,
    review_id uuid not null references file_reviews (id) on delete cascade,
    reply_to uuid references review_notes (id) on delete cascade,
    reviewer_name text not null,
    by_owner boolean not null default false,
    text text not null,
    seconds double precision not null check (seconds >= 0),
    resolved_at timestamptz,
    created_at timestamptz not null default now()
);
create index review_notes_by_review on review_notes (review_id, seconds, created_at);
