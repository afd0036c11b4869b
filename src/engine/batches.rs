//! Arrow batches into a `ResultSet` under the row cap: what the engines that
//! answer in Arrow (Spark Connect, ADBC drivers) share with DataFusion's
//! value rendering (decimals as numbers, dates and timestamps as ISO text).
//!
//! Owns only the cap and the column list; knows nothing of where the
//! batches come from.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::Schema;

use super::{EngineError, ResultColumn, ResultSet};

/// Rows gathered so far, at most `max_rows`; one row more marks the result
/// truncated and tells the caller to stop reading.
pub(crate) struct Collector {
    max_rows: usize,
    columns: Option<Vec<ResultColumn>>,
    rows: Vec<Vec<serde_json::Value>>,
    truncated: bool,
}

impl Collector {
    pub fn new(max_rows: usize) -> Self {
        Collector { max_rows, columns: None, rows: Vec::new(), truncated: false }
    }

    /// Takes the column names and types from the first schema seen.
    pub fn schema(&mut self, schema: &Schema) {
        if self.columns.is_none() {
            self.columns = Some(
                schema
                    .fields()
                    .iter()
                    .map(|f| ResultColumn { name: f.name().clone(), data_type: super::datafusion::type_name(f.data_type()) })
                    .collect(),
            );
        }
    }

    /// Adds a batch's rows; `false` once the cap is passed (read no more).
    pub fn push(&mut self, batch: &RecordBatch) -> Result<bool, EngineError> {
        self.schema(batch.schema().as_ref());
        for i in 0..batch.num_rows() {
            if self.rows.len() == self.max_rows {
                self.truncated = true;
                return Ok(false);
            }
            self.rows.push(super::datafusion::row_of(batch, i)?);
        }
        Ok(true)
    }

    /// The result; `columns` names them when no batch (not even an empty
    /// one) carried a schema.
    pub fn finish(self, columns: impl FnOnce() -> Vec<ResultColumn>) -> ResultSet {
        ResultSet { columns: self.columns.unwrap_or_else(columns), rows: self.rows, truncated: self.truncated }
    }
}
