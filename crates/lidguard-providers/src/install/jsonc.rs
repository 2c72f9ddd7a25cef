//! The JSON the agents read: JSONC, nothing more.

use jsonc_parser::ParseOptions;

/// What the agents accept: JSON plus comments and trailing commas (JSONC). The JSON5 extras
/// are refused — a file using them is not one these agents read.
pub(super) fn parse_options() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}
