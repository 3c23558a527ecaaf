-- Art the owner chose: a picture of the owner's shown for a track (`/set-cover`) or a video
-- (`/set-video-thumbnail`, a picture or a frame of the video) over the art extracted from the
-- file, and a playlist's cover. Deleting the picture falls back to what was extracted.
alter table files add column artwork_id uuid references files (id) on delete set null;
alter table collections add column cover_id uuid references files (id) on delete set null;
