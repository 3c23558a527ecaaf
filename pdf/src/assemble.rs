//! Building a new document out of pages of loaded ones: the common core of merge, extract and
//! split.
//!
//! Rather than deleting what is not wanted from a copy of the source (which leaves outlines,
//! structure trees and links holding on to dropped pages), the wanted pages are copied into an
//! empty document together with exactly the objects they reach, renumbered on the way so that
//! several sources can share one output.

use std::collections::{HashMap, HashSet};

use lopdf::{Dictionary, Document, Object, ObjectId};

use crate::document::{MAX_DEPTH, Source, inherited, later_version};

/// Page attributes that a page may inherit from its ancestors in the page tree (ISO 32000-1,
/// 7.7.3.4). Copied pages get a new, flat parent, so they must carry these themselves.
const INHERITABLE: [&[u8]; 4] = [b"MediaBox", b"CropBox", b"Resources", b"Rotate"];

/// US Letter, what readers assume for a page without a media box.
const DEFAULT_MEDIA_BOX: [i64; 4] = [0, 0, 612, 792];

/// Copies pages of one source document, and everything they use, into a destination document.
pub(crate) struct PageCopier<'a> {
    src: &'a Source,
    /// Every page of the source. A reference to a page that is not copied (a link to it, say)
    /// becomes null: following it would copy that page and, through its /Parent, all the rest.
    src_pages: HashSet<ObjectId>,
    /// Source object → its copy in the destination.
    copies: HashMap<ObjectId, ObjectId>,
    /// Source objects given a destination number but not copied yet.
    pending: Vec<ObjectId>,
}

impl<'a> PageCopier<'a> {
    pub(crate) fn new(src: &'a Source) -> Self {
        PageCopier {
            src,
            src_pages: src.page_ids.iter().copied().collect(),
            copies: HashMap::new(),
            pending: Vec::new(),
        }
    }

    /// Copies the given source pages (repeats allowed) and returns their ids in `dst`, in order.
    /// They still need a parent: see [`finish`].
    pub(crate) fn copy_pages(&mut self, dst: &mut Document, pages: &[ObjectId]) -> Vec<ObjectId> {
        // Number every page before copying any, so that links between copied pages survive.
        // A repeated page becomes a second page object; links keep pointing at the first.
        let new_ids: Vec<ObjectId> = pages
            .iter()
            .map(|old| {
                let new = dst.new_object_id();
                self.copies.entry(*old).or_insert(new);
                new
            })
            .collect();
        for (old, new) in pages.iter().zip(&new_ids) {
            let page = Object::Dictionary(self.page_dictionary(*old));
            let copy = self.rewrite(&page, dst, 0);
            dst.objects.insert(*new, copy);
        }
        self.copy_pending(dst);
        new_ids
    }

    /// Copies a value from the source (a catalog entry, say) with whatever it references.
    pub(crate) fn copy_value(&mut self, dst: &mut Document, value: &Object) -> Object {
        let copy = self.rewrite(value, dst, 0);
        self.copy_pending(dst);
        copy
    }

    /// Copies the named entries of the source's catalog that exist.
    pub(crate) fn copy_catalog_entries(&mut self, dst: &mut Document, keys: &[&str]) -> Dictionary {
        let mut entries = Dictionary::new();
        if let Ok(catalog) = self.src.doc.catalog() {
            for key in keys {
                if let Ok(value) = catalog.get(key.as_bytes()) {
                    let copy = self.copy_value(dst, value);
                    entries.set(*key, copy);
                }
            }
        }
        entries
    }

    /// The page's own dictionary with its inherited attributes made explicit and its /Parent
    /// dropped.
    fn page_dictionary(&self, id: ObjectId) -> Dictionary {
        let doc = &self.src.doc;
        // `lopdf` lists a page tree kid that does not load as a page as a blank page, as
        // viewers show it; keep it blank here too.
        let mut page = doc.get_dictionary(id).cloned().unwrap_or_default();
        for key in INHERITABLE {
            if matches!(page.get(key), Err(_) | Ok(Object::Null))
                && let Some(value) = inherited(doc, &page, key)
            {
                page.set(key, value.clone());
            }
        }
        if !page.has(b"MediaBox") {
            page.set(
                "MediaBox",
                DEFAULT_MEDIA_BOX
                    .iter()
                    .map(|&v| Object::Integer(v))
                    .collect::<Vec<_>>(),
            );
        }
        page.set("Type", Object::Name(b"Page".to_vec()));
        page.remove(b"Parent");
        page
    }

    fn copy_pending(&mut self, dst: &mut Document) {
        while let Some(old) = self.pending.pop() {
            let (Some(object), Some(&new)) = (self.src.doc.objects.get(&old), self.copies.get(&old)) else {
                continue;
            };
            let copy = self.rewrite(object, dst, 0);
            dst.objects.insert(new, copy);
        }
    }

    /// A deep copy of `object` with references renumbered for `dst`; what they point at is
    /// queued for copying.
    fn rewrite(&mut self, object: &Object, dst: &mut Document, depth: usize) -> Object {
        if depth > MAX_DEPTH {
            return Object::Null;
        }
        match object {
            Object::Reference(old) => self.reference(*old, dst),
            Object::Array(items) => Object::Array(
                items
                    .iter()
                    .map(|item| self.rewrite(item, dst, depth + 1))
                    .collect(),
            ),
            Object::Dictionary(dict) => Object::Dictionary(self.rewrite_dictionary(dict, dst, depth)),
            Object::Stream(stream) => {
                let mut copy = stream.clone();
                copy.dict = self.rewrite_dictionary(&stream.dict, dst, depth);
                Object::Stream(copy)
            }
            other => other.clone(),
        }
    }

    fn rewrite_dictionary(&mut self, dict: &Dictionary, dst: &mut Document, depth: usize) -> Dictionary {
        let mut copy = Dictionary::new();
        for (key, value) in dict.iter() {
            copy.set(key.clone(), self.rewrite(value, dst, depth + 1));
        }
        copy
    }

    fn reference(&mut self, old: ObjectId, dst: &mut Document) -> Object {
        if let Some(&new) = self.copies.get(&old) {
            return Object::Reference(new);
        }
        if self.src_pages.contains(&old) || !self.src.doc.objects.contains_key(&old) {
            // A page left behind, or an object the file lacks (which readers take as null).
            return Object::Null;
        }
        let new = dst.new_object_id();
        self.copies.insert(old, new);
        self.pending.push(old);
        Object::Reference(new)
    }
}

/// A new, empty output document for pages of a source of this PDF version.
pub(crate) fn new_document(version: &str) -> Document {
    Document::with_version(later_version(version, "1.5"))
}

/// Gives the copied pages a page tree and `dst` a catalog (with `catalog` entries added).
pub(crate) fn finish(dst: &mut Document, pages: &[ObjectId], mut catalog: Dictionary) {
    let tree_id = dst.new_object_id();
    for page in pages {
        if let Ok(dict) = dst.get_dictionary_mut(*page) {
            dict.set("Parent", tree_id);
        }
    }
    let mut tree = Dictionary::new();
    tree.set("Type", Object::Name(b"Pages".to_vec()));
    tree.set(
        "Kids",
        pages.iter().map(|id| Object::Reference(*id)).collect::<Vec<_>>(),
    );
    tree.set("Count", pages.len() as i64);
    dst.objects.insert(tree_id, Object::Dictionary(tree));
    catalog.set("Type", Object::Name(b"Catalog".to_vec()));
    catalog.set("Pages", tree_id);
    let catalog_id = dst.add_object(catalog);
    dst.trailer.set("Root", catalog_id);
}
