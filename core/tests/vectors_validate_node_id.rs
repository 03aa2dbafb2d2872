//! Golden vectors for `record::validate::validate_node_id`.
mod common;
use lowdown_core::record::validate::validate_node_id;

#[test]
fn validate_node_id_vectors() {
    common::check("validate_node_id.json", |input| {
        let id = common::string(&input["node_id"]);
        match validate_node_id(&id) {
            Ok(()) => Ok(serde_json::Value::Null),
            Err(e) => {
                assert_eq!(e.field, "node_id");
                Err(common::error_kind(&e))
            }
        }
    });
}
