//! Numbers as each layout writes them (Python's repr, Go's strconv, serde_json's own), and the
//! plain integers read without a parser.

use crate::json::layout::Layout;

/// Appends the digits of `n`.
pub(crate) fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends a number as the layout's writer writes it. Integers are the same everywhere; a
/// float is written with the fewest digits that read back as it (every writer here agrees on
/// those), laid out as its writer lays it out:
/// - compact and sorted: serde_json's (`1e-7`, `0.000035`, `1e+20`, `1.0`): plain from 1e-5
///   up to 1e16;
/// - spaced, Python's `repr`: plain from 1e-4 up to 1e16, else `1e-07`, `1.5e+16` (an
///   exponent of two digits at least, with its sign), and always a fraction (`1.0`);
/// - Go's `encoding/json`: plain from 1e-6 up to 1e21 with no fraction where it has none
///   (`1`, `0.000035`), else `1e-7`, `1e+21`.
pub fn write_number(out: &mut Vec<u8>, n: &serde_json::Number, layout: Layout) {
    let float = match (n.is_f64(), n.as_f64()) {
        (true, Some(f)) if f.is_finite() && matches!(layout, Layout::Spaced | Layout::Go) => f,
        // serde_json's own formatting (itoa, ryu), which cannot fail on a Vec.
        _ => {
            let _ = serde_json::to_writer(&mut *out, n);
            return;
        }
    };
    // The fewest digits that read back as the float, and where the point goes: Rust's `{:e}`
    // gives how many (`3.5e-5`: digits 35, the first digit's power of ten -5). Of the numbers
    // with that many digits the one nearest the float is taken, ties to even, as Python's
    // repr and Go's strconv take it (`{:e}` may take the other one of a tie: 899.25 as 899.3).
    let shortest = format!("{:e}", float.abs());
    let places = shortest.split_once('e').map_or(0, |(m, _)| m.len().saturating_sub(2));
    let sci = format!("{:.places$e}", float.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if float.is_sign_negative() {
        out.push(b'-');
    }
    let (plain, fraction_always) = match layout {
        Layout::Spaced => ((-4..16).contains(&exp), true),
        _ => (float == 0.0 || (-6..21).contains(&exp), false),
    };
    if plain {
        let point = exp + 1;
        let mut text = String::new();
        if point <= 0 {
            text.push_str("0.");
            text.extend(std::iter::repeat_n('0', (-point) as usize));
            text.push_str(&digits);
        } else if point as usize >= digits.len() {
            text.push_str(&digits);
            text.extend(std::iter::repeat_n('0', point as usize - digits.len()));
            if fraction_always {
                text.push_str(".0");
            }
        } else {
            text.push_str(&digits[..point as usize]);
            text.push('.');
            text.push_str(&digits[point as usize..]);
        }
        out.extend_from_slice(text.as_bytes());
    } else {
        out.extend_from_slice(&digits.as_bytes()[..1]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits.as_bytes()[1..]);
        }
        let width = if layout == Layout::Spaced { 2 } else { 1 };
        let sign = if exp < 0 { '-' } else { '+' };
        out.extend_from_slice(format!("e{sign}{:0width$}", exp.abs()).as_bytes());
    }
}

/// Whether `text` is digits alone, at most nineteen of them: an integer a u64 always holds.
/// (The scan refuses a leading zero in a JSON number, so such a number is written back as
/// those same digits.)
pub(crate) fn plain_u64(text: &str) -> bool {
    !text.is_empty() && text.len() < 20 && text.bytes().all(|b| b.is_ascii_digit())
}

/// The number `text` writes where [`plain_u64`] says it is one (up to 19 digits always fit a
/// u64): read in the same pass that checks the digits, a count on most lines of most streams.
#[inline]
pub(crate) fn plain_u64_value(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() >= 20 {
        return None;
    }
    text.bytes().try_fold(0u64, |n, b| b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0')))
}
