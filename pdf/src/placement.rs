//! How large each image is drawn: the size `compress` aims its resolution at.
//!
//! The pages' content streams are interpreted just enough to follow the transformation matrix
//! (`q`, `Q`, `cm`) to each `Do` of an image, also inside form XObjects. An image drawn several
//! times counts at its largest. Images drawn only elsewhere (in annotations, patterns or
//! Type 3 glyphs) are not found here.

use std::collections::HashMap;
use std::rc::Rc;

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, ObjectId};

use crate::document::page_attribute;

/// Decompressed content beyond this is not looked at (a bomb, or not worth it).
const MAX_CONTENT: usize = 64 << 20;

/// How deeply form XObjects may nest, and how many form invocations are followed in all.
/// A form drawing another form ten times, nested, would otherwise multiply without end.
const MAX_FORM_DEPTH: usize = 12;
const MAX_FORM_VISITS: usize = 20_000;

/// Graphics-state nesting (`q`) beyond this is ignored rather than grown without bound.
const MAX_STACK: usize = 1_000;

/// The largest drawn size of each image XObject, as (width, height) in points.
pub(crate) fn drawn_image_sizes(doc: &Document, pages: &[ObjectId]) -> HashMap<ObjectId, (f32, f32)> {
    let mut walker = Walker {
        doc,
        sizes: HashMap::new(),
        forms: HashMap::new(),
        form_visits: 0,
    };
    for &page_id in pages {
        let Ok(page) = doc.get_dictionary(page_id) else {
            continue;
        };
        let Ok(content) = doc.get_page_content_with_limit(page_id, MAX_CONTENT) else {
            continue;
        };
        let Ok(operations) = decode(&content) else {
            continue;
        };
        let resources = page_attribute(doc, page, b"Resources").and_then(|r| dictionary(doc, r));
        walker.walk(&operations, resources, Matrix::IDENTITY, 0);
    }
    walker.sizes
}

/// A PDF transformation matrix [a b c d e f].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Matrix([f32; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    fn from_operands(operands: &[Object]) -> Option<Matrix> {
        let values: Vec<f32> = operands
            .iter()
            .map(|o| o.as_float().ok())
            .collect::<Option<_>>()?;
        let values: [f32; 6] = values.try_into().ok()?;
        values.iter().all(|v| v.is_finite()).then_some(Matrix(values))
    }

    /// `self` applied first, then `then` (PDF's `self × then`).
    fn then(self, then: Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [a2, b2, c2, d2, e2, f2] = then.0;
        Matrix([
            a * a2 + b * c2,
            a * b2 + b * d2,
            c * a2 + d * c2,
            c * b2 + d * d2,
            e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2,
        ])
    }

    /// The lengths of the unit square's sides once transformed: an image's drawn size.
    fn unit_square_size(self) -> (f32, f32) {
        let [a, b, c, d, ..] = self.0;
        (a.hypot(b), c.hypot(d))
    }
}

struct Walker<'d> {
    doc: &'d Document,
    sizes: HashMap<ObjectId, (f32, f32)>,
    /// Decoded form content, as forms are often drawn on many pages.
    forms: HashMap<ObjectId, Rc<Vec<Operation>>>,
    form_visits: usize,
}

impl<'d> Walker<'d> {
    fn walk(
        &mut self,
        operations: &[Operation],
        resources: Option<&'d Dictionary>,
        ctm: Matrix,
        depth: usize,
    ) {
        let mut ctm = ctm;
        let mut saved = Vec::new();
        for operation in operations {
            match operation.operator.as_str() {
                "q" if saved.len() < MAX_STACK => saved.push(ctm),
                "Q" => ctm = saved.pop().unwrap_or(ctm),
                "cm" => {
                    if let Some(m) = Matrix::from_operands(&operation.operands) {
                        ctm = m.then(ctm);
                    }
                }
                "Do" => {
                    let name = operation.operands.first().and_then(|o| o.as_name().ok());
                    if let Some(name) = name {
                        self.draw(name, resources, ctm, depth);
                    }
                }
                _ => {}
            }
        }
    }

    fn draw(&mut self, name: &[u8], resources: Option<&'d Dictionary>, ctm: Matrix, depth: usize) {
        let doc = self.doc;
        let Some(id) = resources
            .and_then(|r| r.get(b"XObject").ok())
            .and_then(|x| dictionary(doc, x))
            .and_then(|x| x.get(name).ok())
            .and_then(|x| x.as_reference().ok())
        else {
            return;
        };
        let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) else {
            return;
        };
        match stream.dict.get(b"Subtype").and_then(Object::as_name) {
            Ok(b"Image") => {
                let (width, height) = ctm.unit_square_size();
                let size = self.sizes.entry(id).or_insert((0.0, 0.0));
                *size = (size.0.max(width), size.1.max(height));
            }
            Ok(b"Form") if depth < MAX_FORM_DEPTH && self.form_visits < MAX_FORM_VISITS => {
                self.form_visits += 1;
                let Some(operations) = self.form_operations(id) else {
                    return;
                };
                let matrix = stream
                    .dict
                    .get(b"Matrix")
                    .and_then(Object::as_array)
                    .ok()
                    .and_then(|m| Matrix::from_operands(m))
                    .unwrap_or(Matrix::IDENTITY);
                // A form without resources of its own uses those of the page drawing it.
                let form_resources = stream
                    .dict
                    .get(b"Resources")
                    .ok()
                    .and_then(|r| dictionary(doc, r))
                    .or(resources);
                self.walk(&operations, form_resources, matrix.then(ctm), depth + 1);
            }
            _ => {}
        }
    }

    fn form_operations(&mut self, id: ObjectId) -> Option<Rc<Vec<Operation>>> {
        if let Some(operations) = self.forms.get(&id) {
            return Some(operations.clone());
        }
        let stream = self.doc.get_object(id).and_then(Object::as_stream).ok()?;
        let content = stream.decompressed_content_with_limit(MAX_CONTENT).ok()?;
        let operations = Rc::new(decode(&content).ok()?);
        self.forms.insert(id, operations.clone());
        Some(operations)
    }
}

fn decode(content: &[u8]) -> lopdf::Result<Vec<Operation>> {
    Content::decode(content).map(|c| c.operations)
}

/// A dictionary given directly or by reference.
fn dictionary<'d>(doc: &'d Document, object: &'d Object) -> Option<&'d Dictionary> {
    match object {
        Object::Reference(id) => doc.get_dictionary(*id).ok(),
        Object::Dictionary(dict) => Some(dict),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_compose_in_pdf_order() {
        // Scale by 2, then move by (10, 20): the move is not scaled.
        let scale = Matrix([2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        let shift = Matrix([1.0, 0.0, 0.0, 1.0, 10.0, 20.0]);
        assert_eq!(scale.then(shift), Matrix([2.0, 0.0, 0.0, 2.0, 10.0, 20.0]));
        assert_eq!(shift.then(scale), Matrix([2.0, 0.0, 0.0, 2.0, 20.0, 40.0]));
    }

    #[test]
    fn a_rotated_image_keeps_its_side_lengths() {
        // 300 × 100 points, turned a quarter.
        let m = Matrix([300.0, 0.0, 0.0, 100.0, 0.0, 0.0]).then(Matrix([0.0, 1.0, -1.0, 0.0, 0.0, 0.0]));
        let (w, h) = m.unit_square_size();
        assert!((w - 300.0).abs() < 1e-3 && (h - 100.0).abs() < 1e-3, "{w} × {h}");
    }
}
