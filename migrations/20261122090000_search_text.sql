-- Each file's words (name, description, track and title fields, tags) kept lower case in one
-- column with a trigram index, so `text` search finds words anywhere in them without reading
-- every file of the account. Triggers keep it true whatever path changes a file or its tags.
create extension if not exists pg_trgm;

alter table files add column search_text text not null default '';

create function file_words(f files) returns text language sql stable as $$
    select lower(concat_ws(' ', f.file_name, f.description, f.title, array_to_string(f.artists, ' '),
                           f.album, f.genre,
                           (select string_agg(t.text, ' ') from file_tags ft join tags t on t.id = ft.tag_id
                            where ft.file_id = f.id)))
$$;

create function files_keep_words() returns trigger language plpgsql as $$
begin
    new.search_text := file_words(new);
    return new;
end
$$;

create trigger files_words before insert or update of file_name, description, title, artists, album, genre
    on files for each row execute function files_keep_words();

-- A tag put on or taken off a file rewrites that file's words.
create function file_tags_keep_words() returns trigger language plpgsql as $$
begin
    update files set search_text = file_words(files)
    where id = case when tg_op = 'DELETE' then old.file_id else new.file_id end;
    return null;
end
$$;

create trigger file_tags_words after insert or delete on file_tags
    for each row execute function file_tags_keep_words();

update files set search_text = file_words(files);

create index files_words on files using gin (search_text gin_trgm_ops);
