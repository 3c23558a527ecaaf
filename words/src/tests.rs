use super::{Search, Words};

/// An index of these tsvector texts, moment `i` the `i`-th.
fn words(moments: &[&str]) -> Words {
    let mut words = Words::default();
    for m in moments {
        words.push(m).unwrap();
    }
    words
}

fn best(words: &Words, tsquery: &str) -> Vec<usize> {
    words.best(&Search::parse(tsquery).unwrap(), 100, |_| true)
}

fn sorted(mut found: Vec<usize>) -> Vec<usize> {
    found.sort_unstable();
    found
}

const MOMENTS: [&str; 6] = [
    "'brake':2 'pad':3 'replac':1",            // replace brake pads
    "'brake':1,4 'fluid':2 'pad':5 'check':3", // brake fluid check brake pads
    "'cake':2 'bake':1",                       // bake a cake
    "",                                        // only stop words
    "'pad':1 'brake':2",                       // pad brake
    "'dog':1 'bark':2 'loud':3",               // dogs bark loudly
];

#[test]
fn and_or_and_not_match_what_postgresql_matches() {
    let words = words(&MOMENTS);
    assert_eq!(sorted(best(&words, "'brake'")), [0, 1, 4]);
    assert_eq!(sorted(best(&words, "'brake' & 'fluid'")), [1]);
    assert_eq!(sorted(best(&words, "'cake' | 'fluid'")), [1, 2]);
    assert_eq!(sorted(best(&words, "'brake' & !'fluid'")), [0, 4]);
    assert_eq!(sorted(best(&words, "'nowhere'")), [] as [usize; 0]);
    assert_eq!(sorted(best(&words, "'brake' & 'nowhere'")), [] as [usize; 0]);
    // A moment without words (3) matches a negation, as in PostgreSQL.
    assert_eq!(sorted(best(&words, "!'brake'")), [2, 3, 5]);
    assert_eq!(sorted(best(&words, "!'brake' & !'cake'")), [3, 5]);
    assert_eq!(sorted(best(&words, "'cake' | !'brake'")), [2, 3, 5]);
    assert_eq!(sorted(best(&words, "'fluid' | !'pad'")), [1, 2, 3, 5]);
    assert_eq!(sorted(best(&words, "!( 'brake' | 'cake' )")), [3, 5]);
    assert_eq!(sorted(best(&words, "!!'cake'")), [2]);
    assert_eq!(best(&words, ""), [] as [usize; 0]);
}

#[test]
fn a_phrase_matches_its_words_at_their_distances() {
    let words = words(&MOMENTS);
    // "brake pad" stands in 0 and 1 (positions 4, 5), reversed in 4.
    assert_eq!(sorted(best(&words, "'brake' <-> 'pad'")), [0, 1]);
    assert_eq!(sorted(best(&words, "'pad' <-> 'brake'")), [4]);
    // Two apart: "brake (fluid) check" in 1 only.
    assert_eq!(sorted(best(&words, "'brake' <2> 'check'")), [1]);
    assert_eq!(sorted(best(&words, "'brake' <-> 'check'")), [] as [usize; 0]);
    // Each lexeme its distance after the one before it: fluid 1 after brake, pad 3 after fluid.
    assert_eq!(sorted(best(&words, "'brake' <-> 'fluid' <3> 'pad'")), [1]);
    assert_eq!(
        sorted(best(&words, "'brake' <-> 'fluid' <2> 'pad'")),
        [] as [usize; 0]
    );
    assert_eq!(sorted(best(&words, "!( 'brake' <-> 'pad' )")), [2, 3, 4, 5]);
    // The same lexeme twice needs two places.
    let repeated = self::words(&["'la':1,2,3", "'la':1,3"]);
    assert_eq!(sorted(best(&repeated, "'la' <-> 'la'")), [0]);
    assert_eq!(sorted(best(&repeated, "'la' <2> 'la'")), [0, 1]);
}

#[test]
fn ranked_by_how_often_how_rare_and_how_short() {
    let words = words(&[
        "'brake':1 'drum':2 'old':3", // once, longer
        "'brake':1,3 'pad':2",        // twice
        "'brake':1 'pad':2",          // once, short
        "'cake':1",
    ]);
    assert_eq!(best(&words, "'brake'"), [1, 2, 0]);
    // "drum" is rarer than "pad": the moment with it comes before the one with "pad".
    assert_eq!(best(&words, "'brake' & ( 'drum' | 'pad' )")[0], 0);
    // A negated word does not rank; the rest tie and keep their order. Negated twice, it does.
    assert_eq!(best(&words, "!'cake' & !'drum'"), [1, 2]);
    assert_eq!(best(&words, "!!'brake'"), [1, 2, 0]);
}

#[test]
fn n_and_keep_choose_among_the_matches() {
    let words = words(&["'a':1", "'a':1,2", "'a':1,2,3", "'a':1,2,3,4", "'b':1"]);
    let search = Search::parse("'a'").unwrap();
    assert_eq!(words.best(&search, 2, |_| true), [3, 2]);
    assert_eq!(words.best(&search, 10, |i| i % 2 == 0), [2, 0]);
    assert_eq!(words.best(&search, 0, |_| true), [] as [usize; 0]);
}

#[test]
fn an_index_kept_up_to_date_answers_as_one_built_anew() {
    let old = words(&MOMENTS);
    // Moments 1 and 3 went, two came.
    let came = ["'brake':1 'pad':2 'new':3", "'bark':1 'dog':2"];
    let mut kept = Words::keeping(&old, &[0, 2, 4, 5]);
    for m in came {
        kept.push(m).unwrap();
    }
    let anew = words(&[MOMENTS[0], MOMENTS[2], MOMENTS[4], MOMENTS[5], came[0], came[1]]);
    assert_eq!(kept.len(), 6);
    for query in [
        "'brake'",
        "'brake' <-> 'pad'",
        "!'brake'",
        "'dog' | 'cake'",
        "'fluid'",
        "'bark' & !'loud'",
    ] {
        assert_eq!(best(&kept, query), best(&anew, query), "{query}");
    }
    assert!(kept.bytes() > 0);
}
